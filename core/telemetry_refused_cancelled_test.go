package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// A call refused for its arguments is counted nowhere (WithTelemetry), also
// when the caller's context happens to be cancelled already: nothing was
// waited for and no store was asked, so it is no cancelled acquisition.
func TestRefusedAcquireOnCancelledContextIsNotCounted(t *testing.T) {
	p := newProbe()
	l := newLocker(memorystore.New(), core.WithTelemetry(p.telemetry()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.TryObtain(ctx, ""); !errors.Is(err, core.ErrEmptyKey) {
		t.Fatalf("TryObtain with an empty key: %v, want ErrEmptyKey", err)
	}
	if _, err := l.Obtain(ctx, ""); !errors.Is(err, core.ErrEmptyKey) {
		t.Fatalf("Obtain with an empty key: %v, want ErrEmptyKey", err)
	}
	if got := p.sum(t, "reqlock.lock.acquisitions"); got != 0 {
		t.Errorf("reqlock.lock.acquisitions = %d after two calls refused with ErrEmptyKey, want 0 (cancelled: %d)",
			got, p.sum(t, "reqlock.lock.acquisitions", outcome("cancelled")))
	}
	if got := p.count(t, "reqlock.lock.wait.duration"); got != 0 {
		t.Errorf("reqlock.lock.wait.duration has %d measurements for refused calls, want 0", got)
	}
}
