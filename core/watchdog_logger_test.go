package core_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// blockingHandler is a slog handler whose sink stalls on warnings, as a
// JSON handler on a full stderr pipe or a slow log shipper does.
type blockingHandler struct {
	stall time.Duration
	warns *atomic.Int32
}

func (h blockingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h blockingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.warns.Add(1)
		time.Sleep(h.stall)
	}
	return nil
}
func (h blockingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h blockingHandler) WithGroup(string) slog.Handler      { return h }

// The watchdog loop logs "lock lost" synchronously for each expired lock
// before it looks at the others. A logger that stalls on that one line
// keeps the loop from declaring the next lock lost by its own deadline:
// another caller takes the key while its holder still believes it holds
// it. Two holders at once, on a healthy store.
func TestSlowLoggerDoesNotDelayLost(t *testing.T) {
	st := memorystore.New()
	const ttl = 200 * time.Millisecond
	warns := new(atomic.Int32)
	l := core.NewLocker(st, core.WithTTL(ttl), core.WithoutWatchdog(),
		core.WithLogger(slog.New(blockingHandler{stall: time.Second, warns: warns})))
	other := newLocker(st, core.WithTTL(ttl))
	ctx := ctxT(t, 10*time.Second)

	a, err := l.TryObtain(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	time.Sleep(40 * time.Millisecond)
	b, err := l.TryObtain(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release(ctx)

	// Another caller polls for b's key until the store frees it.
	var b2 *core.Lock
	deadline := time.Now().Add(2 * time.Second)
	for b2 == nil {
		if time.Now().After(deadline) {
			t.Fatal("b's key was never freed")
		}
		if b2, err = other.TryObtain(ctx, "b"); err != nil {
			b2 = nil
			time.Sleep(time.Millisecond)
		}
	}
	defer b2.Release(ctx)
	select {
	case <-b.Lost():
	default:
		t.Fatalf("another caller holds b's key (fence %d) while b's holder (fence %d) was not told "+
			"it lost it: the watchdog loop is stuck logging a's loss (%d warning(s) so far)",
			b2.Fence(), b.Fence(), warns.Load())
	}
}
