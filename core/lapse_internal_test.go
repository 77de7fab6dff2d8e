package core

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// The memory store tells a holder whose lease ran out before another caller
// holds the key, however late the holder's own timer: whether the key's
// entry is still there, or a sweep or Delete dropped it, and through a
// store that embeds the memory store or forwards to it.
func TestMemoryLapseFiresLostBeforeTheNextHolder(t *testing.T) {
	ctx := context.Background()
	fill := func(st Store) { // other keys fill the store to its sweep size
		for i := range minSweep {
			if _, err := st.Acquire(ctx, store.Lease{Key: fmt.Sprintf("filler-%d", i), Token: "t", TTL: time.Minute}); err != nil {
				t.Fatal(err)
			}
		}
	}
	shared := memorystore.New()
	cases := []struct {
		name          string
		holder, other Store
		meanwhile     func(holder *Locker)
	}{
		{name: "entry still there", holder: memorystore.New()},
		{name: "swept", holder: memorystore.New(), meanwhile: func(h *Locker) { fill(h.store) }},
		{name: "deleted", holder: memorystore.New(), meanwhile: func(h *Locker) {
			skey, _ := h.StoreKey("k")
			h.store.(*memorystore.Store).Delete(skey)
		}},
		{name: "embedding store", holder: embeddingMemoryStore{memorystore.New()}},
		{name: "forwarding store", holder: forwardingMemoryStore{memorystore.New()}},
		{name: "holder on a wrapper of a shared store", holder: embeddingMemoryStore{shared}, other: shared},
		{name: "next caller on a wrapper of a shared store", holder: memorystore.New()},
	}
	cases[len(cases)-1].other = embeddingMemoryStore{cases[len(cases)-1].holder.(*memorystore.Store)}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			other := c.other
			if other == nil {
				other = c.holder
			}
			holder, lk := lapsingHolder(t, c.holder, 30*time.Millisecond)
			time.Sleep(60 * time.Millisecond) // past the store's lease
			if c.meanwhile != nil {
				c.meanwhile(holder)
			}
			next, err := NewLocker(other, quietLogger()).TryObtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = next.Release(ctx) }()
			mustBeLost(t, lk, "another caller holds the key and its last holder's Lost has not fired")
			if err := lk.Release(ctx); err == nil {
				t.Fatal("the lapsed holder released the next holder's lock")
			}
		})
	}
}

// A refused attempt leaves the holder's lapse notice with the key: when the
// holder's lease has run out and another caller takes the key, the holder
// is told, although an attempt of a third Locker came in between.
func TestMemoryLapseRefusedAttemptKeepsHoldersNotice(t *testing.T) {
	ctx := context.Background()
	st := memorystore.New()
	_, lk := lapsingHolder(t, st, 30*time.Millisecond)
	refused := NewLocker(st, quietLogger())
	if _, err := refused.TryObtain(ctx, "k"); err == nil {
		t.Fatal("a held key was taken")
	}
	time.Sleep(60 * time.Millisecond) // past the holder's lease
	next, err := NewLocker(st, quietLogger()).TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = next.Release(ctx) }()
	select {
	case <-lk.Lost():
	default:
		t.Fatal("the key was taken from a lapsed holder that a refused attempt left untold")
	}
}
