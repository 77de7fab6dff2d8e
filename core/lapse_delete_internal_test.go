package core

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/memorystore"
)

// Delete of a key whose lease ran out marks the lapsed holder lost before
// it lets go of the store's mutex: a caller queued on that mutex, which
// takes the key the moment Delete lets go, finds the holder's Lost closed.
// Here the scheduler is pinned to one P and the mutex is made to hand over
// in order (Delete, then the caller), so that the caller runs as soon as
// Delete lets go.
func TestMemoryLapseDeletedKeyNotFreeBeforeHolderIsTold(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	st := memorystore.New()
	holder, lk := lapsingHolder(t, st, 30*time.Millisecond)
	skey, _ := holder.StoreKey("k")
	other := NewLocker(st, quietLogger())
	time.Sleep(60 * time.Millisecond) // past the store's lease

	type taken struct {
		lk       *Lock
		err      error
		lostThen bool // the lapsed holder's Lost had fired when the caller got the key
	}
	got := make(chan taken, 1)
	deleted := make(chan struct{})
	unlock := holdStoreMutex(t, st)
	go func() {
		st.Delete(skey)
		close(deleted)
	}()
	time.Sleep(3 * time.Millisecond) // Delete waits for the mutex
	go func() {
		next, err := other.TryObtain(ctx, "k")
		r := taken{lk: next, err: err}
		select {
		case <-lk.Lost():
			r.lostThen = true
		default:
		}
		got <- r
	}()
	time.Sleep(3 * time.Millisecond) // and the caller behind it
	// Let Delete find the mutex taken after a long wait: it turns the mutex
	// to handing over in order, Delete, then the caller.
	unlock()

	r := <-got
	<-deleted
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer func() { _ = r.lk.Release(ctx) }()
	if !r.lostThen {
		t.Error("another caller got the deleted key while its lapsed holder's Lost had not fired")
	}
}

// blockingNotice is a lapse notice whose Lapse waits until it is let go:
// the store calls it under its mutex, so it holds the mutex meanwhile.
type blockingNotice struct {
	fired chan struct{}
	hold  chan struct{}
}

func (n blockingNotice) Lapse() func() {
	close(n.fired)
	<-n.hold
	return nil
}

// holdStoreMutex returns once st's mutex is held, by a lapse notice the
// store fires under it, and a func that lets it go in two steps, as the
// test before the stores had their own package did by hand: let go, taken
// again at once, held a moment, let go. A mutex that has waited long hands
// over in order, so the waiters run Delete first, then the caller.
func holdStoreMutex(t *testing.T, st *memorystore.Store) (unlock func()) {
	t.Helper()
	ctx := context.Background()
	key := "hold-" + t.Name()
	n := blockingNotice{fired: make(chan struct{}), hold: make(chan struct{})}
	if _, err := st.Acquire(store.WithLapseNotice(ctx, n), store.Lease{Key: key, Token: "a", TTL: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = st.Acquire(ctx, store.Lease{Key: key, Token: "b", TTL: time.Minute})
	}()
	<-n.fired
	return func() {
		close(n.hold)
		<-done
	}
}
