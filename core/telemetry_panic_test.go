package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// panickingStore is a third-party Store whose Acquire panics.
type panickingStore struct{}

func (panickingStore) Acquire(context.Context, store.Lease) (store.Grant, error) { panic("store bug") }
func (panickingStore) Extend(_ context.Context, ls []store.Lease) []store.Renewal {
	return make([]store.Renewal, len(ls))
}
func (panickingStore) Release(context.Context, string, string) error { return nil }
func (panickingStore) TTL(context.Context, string, string) (time.Duration, error) {
	return 0, nil
}

// A Store that panics in Acquire still gets its acquire span ended (with
// an Error status), and the panic reaches the caller unchanged.
func TestAcquireSpanEndsWhenTheStorePanics(t *testing.T) {
	p := newProbe()
	l := core.NewLocker(panickingStore{}, core.WithTelemetry(p.telemetry()))
	func() {
		defer func() {
			if r := recover(); r != "store bug" {
				t.Fatalf("recovered %v, want the store's panic", r)
			}
		}()
		_, _ = l.TryObtain(context.Background(), "k")
	}()
	spans := p.spans.GetSpans()
	if len(spans) != 1 || spans[0].Name != "reqlock.acquire" {
		t.Fatalf("ended spans %v, want the one reqlock.acquire", spans)
	}
	if spans[0].Status.Description == "" {
		t.Fatalf("the span of a panicked acquire has no error status: %+v", spans[0].Status)
	}
}
