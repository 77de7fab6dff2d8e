package core

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"
)

func quietLogger() Option { return WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))) }

// lapsingHolder is a Locker on st, without watchdog, holding "k" on a
// lease of ttl while its own timer is pushed an hour out, as a stalled
// process would have it: only the store can tell it that the lease ran out.
// The lock is released at cleanup, which stops its watching.
func lapsingHolder(t *testing.T, st Store, ttl time.Duration) (*Locker, *Lock) {
	t.Helper()
	holder := NewLocker(st, WithTTL(ttl), WithoutWatchdog(), quietLogger())
	lk, err := holder.TryObtain(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lk.Release(context.Background()) })
	holder.dog.mu.Lock()
	lk.validUntil = time.Now().Add(time.Hour)
	holder.dog.mu.Unlock()
	return holder, lk
}

// attempted is what a TryObtain returned.
type attempted struct {
	lk  *Lock
	err error
}

// tryAsync runs l.TryObtain(key) on a goroutine of its own.
func tryAsync(l *Locker, key string) <-chan attempted {
	got := make(chan attempted, 1)
	go func() {
		lk, err := l.TryObtain(context.Background(), key)
		got <- attempted{lk, err}
	}()
	return got
}

// mustBeLost fails unless lk's Lost is closed.
func mustBeLost(t *testing.T, lk *Lock, what string) {
	t.Helper()
	select {
	case <-lk.Lost():
	default:
		t.Fatal(what)
	}
}

// The memory store tells a holder whose lease ran out before another caller
// holds the key, however late the holder's own timer: whether the key's
// entry is still there, or a sweep or Delete dropped it, and through a
// store that embeds the memory store or forwards to it.
func TestMemoryLapseFiresLostBeforeTheNextHolder(t *testing.T) {
	ctx := context.Background()
	fill := func(st Store) { // other keys fill the store to its sweep size
		for i := range minSweep {
			if _, err := st.Acquire(ctx, Lease{Key: fmt.Sprintf("filler-%d", i), Token: "t", TTL: time.Minute}); err != nil {
				t.Fatal(err)
			}
		}
	}
	shared := NewMemoryStore()
	cases := []struct {
		name          string
		holder, other Store
		meanwhile     func(holder *Locker)
	}{
		{name: "entry still there", holder: NewMemoryStore()},
		{name: "swept", holder: NewMemoryStore(), meanwhile: func(h *Locker) { fill(h.store) }},
		{name: "deleted", holder: NewMemoryStore(), meanwhile: func(h *Locker) {
			skey, _ := h.StoreKey("k")
			h.store.(*MemoryStore).Delete(skey)
		}},
		{name: "embedding store", holder: embeddingMemoryStore{NewMemoryStore()}},
		{name: "forwarding store", holder: forwardingMemoryStore{NewMemoryStore()}},
		{name: "holder on a wrapper of a shared store", holder: embeddingMemoryStore{shared}, other: shared},
		{name: "next caller on a wrapper of a shared store", holder: NewMemoryStore()},
	}
	cases[len(cases)-1].other = embeddingMemoryStore{cases[len(cases)-1].holder.(*MemoryStore)}
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

// minSweep is the map size at which the memory store starts sweeping
// lapsed entries (memorystore's threshold): the tests fill the store past
// it to make a sweep run.
const minSweep = 1024
