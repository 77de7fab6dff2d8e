package core_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// Without WithTelemetry a lock cycle allocates what it did before
// telemetry existed: these are the counts measured on the memory store
// before it was added (the token, the Lock, its turn channel and the store's
// entry; Obtain adds its wait's lookup).
const (
	offTryCycleAllocs    = 4
	offObtainCycleAllocs = 5
)

func TestTelemetryOffAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	ctx := context.Background()
	l := newLocker(memorystore.New())
	// A lock held throughout keeps the watchdog running, so that no cycle
	// pays for starting its goroutine.
	held, err := l.TryObtain(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	for _, c := range []struct {
		name   string
		obtain func(context.Context, string) (*core.Lock, error)
		want   float64
	}{
		{"TryObtain", l.TryObtain, offTryCycleAllocs},
		{"Obtain", l.Obtain, offObtainCycleAllocs},
	} {
		got := testing.AllocsPerRun(1000, func() {
			lk, err := c.obtain(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			if err := lk.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
		if got != c.want {
			t.Errorf("%s + Release without telemetry: %v allocations, want %v", c.name, got, c.want)
		}
	}
}
