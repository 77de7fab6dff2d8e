package core

import (
	"context"
	"testing"
	"time"
)

// Delete of a key whose lease ran out drops its entry as a sweep would:
// the holder, whose timer is late, must still hear that the key is gone
// before the next caller holds it.
func TestMemoryLapseSurvivesDeleteOfExpiredEntry(t *testing.T) {
	ctx := context.Background()
	st := NewMemoryStore()
	holder := NewLocker(st, WithTTL(30*time.Millisecond), WithoutWatchdog(), quietLogger())
	other := NewLocker(st, quietLogger())
	lk, err := holder.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lk.Release(ctx) }()
	holder.dog.mu.Lock()
	lk.validUntil = time.Now().Add(time.Hour) // the holder's timer will not say it
	holder.dog.mu.Unlock()
	time.Sleep(60 * time.Millisecond) // past the store's lease

	skey, err := holder.StoreKey("k")
	if err != nil {
		t.Fatal(err)
	}
	st.Delete(skey)
	next, err := other.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = next.Release(ctx) }()
	select {
	case <-lk.Lost():
	default:
		t.Fatal("another caller holds the key and its last holder's Lost has not fired: Delete dropped its expired entry")
	}
}
