package etcdstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

func TestCancelVoidsALaterAcquireOfTheToken(t *testing.T) {
	s, _ := newStore(t)
	ctx := ctxFor(t, 10*time.Second)
	l := store.Lease{Key: "t:{c}", Token: "tok", TTL: 2 * time.Second}
	if err := s.Cancel(ctx, l); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("cancel before the acquire: %v, want ErrNotHeld", err)
	}
	// The acquire lands after its cancel: it takes nothing.
	if _, err := s.Acquire(ctx, l); err == nil {
		t.Fatal("an acquire of a cancelled token took the lock")
	}
	h, err := s.Inspect(ctx, l.Key)
	if err != nil || h.Held {
		t.Fatalf("after the late acquire: %+v %v", h, err)
	}
	// Another token takes it, and a cancel of it frees it.
	l2 := store.Lease{Key: l.Key, Token: "tok2", TTL: 2 * time.Second}
	if _, err := s.Acquire(ctx, l2); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx, l2); err != nil {
		t.Fatalf("cancel of a held lock: %v", err)
	}
	if h, _ := s.Inspect(ctx, l.Key); h.Held {
		t.Fatal("cancelled lock still held")
	}
}
