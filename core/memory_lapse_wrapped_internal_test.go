package core

import (
	"context"
	"testing"
	"time"
)

// embeddingMemoryStore is how a user adds to the memory store: every Store
// and Waker method is the embedded one's.
type embeddingMemoryStore struct{ *MemoryStore }

// forwardingMemoryStore is a user's plain Store over a memory store, say
// to count its calls: each method passes its context on unchanged.
type forwardingMemoryStore struct{ inner *MemoryStore }

func (f forwardingMemoryStore) Acquire(ctx context.Context, l Lease) (Grant, error) {
	return f.inner.Acquire(ctx, l)
}

func (f forwardingMemoryStore) Extend(ctx context.Context, leases []Lease) []Renewal {
	return f.inner.Extend(ctx, leases)
}

func (f forwardingMemoryStore) Release(ctx context.Context, key, token string) error {
	return f.inner.Release(ctx, key, token)
}

func (f forwardingMemoryStore) TTL(ctx context.Context, key, token string) (time.Duration, error) {
	return f.inner.TTL(ctx, key, token)
}

// lapsedThroughWrapper has a holder on holderStore, whose timer is pushed an
// hour out, run past its lease, and another Locker on otherStore take the
// key: the holder's Lost must be closed by then.
func lapsedThroughWrapper(t *testing.T, holderStore, otherStore Store) {
	t.Helper()
	ctx := context.Background()
	holder := NewLocker(holderStore, WithTTL(30*time.Millisecond), WithoutWatchdog(), quietLogger())
	other := NewLocker(otherStore, quietLogger())
	lk, err := holder.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lk.Release(ctx) }()
	holder.dog.mu.Lock()
	lk.validUntil = time.Now().Add(time.Hour) // the holder's timer will not say it
	holder.dog.mu.Unlock()
	time.Sleep(60 * time.Millisecond) // past the store's lease

	next, err := other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = next.Release(ctx) }()
	select {
	case <-lk.Lost():
	default:
		t.Fatal("another caller holds the key and its last holder's Lost has not fired")
	}
}

// A Store that embeds *MemoryStore is a memory store: its holders hear of a
// lapse before the next holder runs, as on *MemoryStore itself.
func TestMemoryLapseFiresLostThroughEmbeddingStore(t *testing.T) {
	st := embeddingMemoryStore{NewMemoryStore()}
	lapsedThroughWrapper(t, st, st)
}

// The same through a user's Store that forwards each call, context and
// all, to a *MemoryStore.
func TestMemoryLapseFiresLostThroughForwardingStore(t *testing.T) {
	st := forwardingMemoryStore{NewMemoryStore()}
	lapsedThroughWrapper(t, st, st)
}

// A holder on a wrapper and the next caller on the *MemoryStore underneath
// share one store: the holder hears of the lapse all the same.
func TestMemoryLapseFiresLostForHolderOnWrapperOfSharedStore(t *testing.T) {
	st := NewMemoryStore()
	lapsedThroughWrapper(t, embeddingMemoryStore{st}, st)
}

// The reverse: the holder on the *MemoryStore, the next caller on a
// wrapper of it. This one the store's entry itself carries.
func TestMemoryLapseFiresLostForHolderOnSharedStoreTakenThroughWrapper(t *testing.T) {
	st := NewMemoryStore()
	lapsedThroughWrapper(t, st, embeddingMemoryStore{st})
}
