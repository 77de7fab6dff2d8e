package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// ReleaseRecording on the nil *Lock a refused TryObtain returns answers
// ErrNotHeld, as Release does, and writes no record.
func TestNilLockReleaseRecording(t *testing.T) {
	ctx := context.Background()
	s := memorystore.New()
	held, err := newLocker(s).TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	lk, err := newLocker(s).TryObtain(ctx, "k")
	if lk != nil || !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("TryObtain of a held key: %v, %v", lk, err)
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("ReleaseRecording on the nil lock panicked: %v", r)
			}
		}()
		if err := lk.ReleaseRecording(ctx, []byte("done"), time.Minute); !errors.Is(err, core.ErrNotHeld) {
			t.Errorf("ReleaseRecording: %v, want ErrNotHeld", err)
		}
	}()
	if _, err := held.TTL(ctx); err != nil {
		t.Errorf("the holder's lock: %v", err)
	}
}
