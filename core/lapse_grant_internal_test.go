package core

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/memorystore"
)

// The holder's goroutine may be held up between the store's grant and the
// registration of its lapse callback (a loaded machine, a slow metrics
// pipeline) for longer than its lease: another caller may take the key in
// between. The lock handed back then must already be lost, as its timer,
// here stuck behind another lock's loss, cannot be relied on to say so.
func TestMemoryLapseKeyTakenBeforeLapseRegistered(t *testing.T) {
	ctx := context.Background()
	st := memorystore.New()
	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

	var mu sync.Mutex
	adds, ends := 0, 0
	grantHeld := make(chan struct{}) // the holder sits between grant and registration
	letGrant := make(chan struct{})  // let it go on
	loopStuck := make(chan struct{}) // the watchdog loop sits in a loss's telemetry
	letLoop := make(chan struct{})   // let it go on
	gate := heldGate{onAdd: func(v int64) {
		mu.Lock()
		var wait, signal chan struct{}
		if v > 0 {
			if adds++; adds == 2 { // the lock on "k", after the sacrificial one
				wait, signal = letGrant, grantHeld
			}
		} else if ends++; ends == 1 { // the sacrificial lock's loss
			wait, signal = letLoop, loopStuck
		}
		mu.Unlock()
		if wait != nil {
			close(signal)
			<-wait
		}
	}}
	holder := NewLocker(st, WithTTL(30*time.Millisecond), WithoutWatchdog(), quiet,
		WithTelemetry(Telemetry{MeterProvider: heldGateProvider{meter: heldGateMeter{held: gate}}}))
	other := NewLocker(st, quiet)

	// A lock of the holder's runs out: its watchdog loop is stuck in that
	// loss's telemetry from now on, a late timer for every other lock.
	lk0, err := holder.TryObtain(ctx, "k0")
	if err != nil {
		t.Fatal(err)
	}
	unstuck := sync.OnceFunc(func() { close(letLoop) })
	defer unstuck()
	<-loopStuck

	got := tryAsync(holder, "k")
	<-grantHeld
	time.Sleep(60 * time.Millisecond) // past the store's lease on "k"
	next, err := other.TryObtain(ctx, "k")
	close(letGrant)
	r := <-got
	if err != nil {
		t.Fatalf("the key was not free after the holder's lease ran out: %v", err)
	}
	defer func() { _ = next.Release(ctx) }()
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer func() { _ = r.lk.Release(ctx) }()
	defer func() { _ = lk0.Release(ctx) }()
	select {
	case <-r.lk.Lost():
	default:
		t.Error("the holder was handed a lock another caller already holds, with Lost still open")
	}
	unstuck()
}
