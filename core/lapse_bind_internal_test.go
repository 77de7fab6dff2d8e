package core

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/reqlock/reqlock/memorystore"
)

// The holder's goroutine may be held up after its lock joins the watchdog
// and before it ties the lock to the store's lapse target, long enough for
// the watchdog to declare the lock lost (its lease ran out while the grant
// was on its way): the target must then not keep the lost lock, as the
// store entry that holds the target stays until the key is used again or
// a sweep comes. Here the scheduler is pinned to one P and the watchdog's
// mutex is queued so that the watchdog runs in that gap.
func TestMemoryLapseTargetNotBoundToLockLostBeforeBind(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	st := memorystore.New()

	var mu sync.Mutex
	adds := 0
	grantHeld := make(chan struct{})
	letGrant := make(chan struct{})
	gate := heldGate{onAdd: func(v int64) {
		mu.Lock()
		hold := false
		if v > 0 {
			adds++
			hold = adds == 2 // the lock on "k", after the anchor
		}
		mu.Unlock()
		if hold {
			close(grantHeld)
			<-letGrant
		}
	}}
	holder := NewLocker(st, WithTTL(MinTTL), WithoutWatchdog(), quietLogger(),
		WithTelemetry(Telemetry{MeterProvider: heldGateProvider{meter: heldGateMeter{held: gate}}}))

	// An anchor lock keeps the watchdog loop running, asleep until far out.
	anchor, err := holder.TryObtain(ctx, "anchor")
	if err != nil {
		t.Fatal(err)
	}
	holder.dog.mu.Lock()
	anchor.validUntil = time.Now().Add(time.Hour)
	holder.dog.notify()
	holder.dog.mu.Unlock()
	defer func() { _ = anchor.Release(ctx) }()

	got := tryAsync(holder, "k")
	<-grantHeld
	time.Sleep(3 * MinTTL) // past the lock's validity: the watchdog finds it expired

	holder.dog.mu.Lock()
	close(letGrant)
	time.Sleep(3 * time.Millisecond) // the holder waits for the mutex in add
	holder.dog.notify()
	time.Sleep(3 * time.Millisecond) // and the watchdog loop behind it
	// Let the holder find the mutex taken after a long wait: it turns the
	// mutex to handing over in order, holder, then loop, then whoever comes.
	holder.dog.mu.Unlock()
	holder.dog.mu.Lock()
	time.Sleep(3 * time.Millisecond)
	holder.dog.mu.Unlock()

	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	lk := r.lk
	select {
	case <-lk.Lost():
	case <-time.After(5 * time.Second):
		_ = lk.Release(ctx)
		t.Fatal("the lock was not lost")
	}
	// Its holder drops the lost lock without a Release, which it owes
	// nobody: nothing may keep it alive now.
	p := weak.Make(lk)
	lk, r = nil, attempted{}
	if !collected(p) {
		t.Fatal("the store keeps a lost lock alive through its lapse target")
	}
	runtime.KeepAlive(st)
}
