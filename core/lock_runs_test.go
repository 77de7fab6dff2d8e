package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// The pieces Once is made of, for a caller that records its runs itself:
// a run marked and released without a record is in doubt for the next
// holder, refused under RefuseInDoubt (the caller's or the Locker's), run
// again and said so under RunAgain; a run unmarked is not.
func TestLockMarkRun(t *testing.T) {
	ctx := context.Background()
	s := memorystore.New()
	l := core.NewLocker(s)
	leaveInDoubt := func(key string) {
		t.Helper()
		lk, err := l.TryObtain(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if doubt, err := lk.MarkRun(ctx, time.Minute, core.RunAgain); doubt || err != nil {
			t.Fatalf("the first mark: in doubt %v, %v", doubt, err)
		}
		_ = lk.Release(ctx)
	}
	mark := func(l *core.Locker, key string, p core.DoubtPolicy) (bool, error) {
		t.Helper()
		lk, err := l.TryObtain(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		defer lk.Release(ctx)
		return lk.MarkRun(ctx, time.Minute, p)
	}

	leaveInDoubt("a")
	if doubt, err := mark(l, "a", core.RefuseInDoubt); !doubt || !errors.Is(err, core.ErrInDoubt) {
		t.Fatalf("RefuseInDoubt after a run in doubt: %v, %v; want ErrInDoubt", doubt, err)
	}
	refusing := core.NewLocker(s, core.WithDoubtPolicy(core.RefuseInDoubt))
	if _, err := mark(refusing, "a", core.RunAgain); !errors.Is(err, core.ErrInDoubt) {
		t.Fatalf("RunAgain on a Locker WithDoubtPolicy(RefuseInDoubt): %v; want ErrInDoubt", err)
	}
	if doubt, err := mark(l, "a", core.RunAgain); !doubt || err != nil {
		t.Fatalf("RunAgain after a run in doubt: %v, %v; want it told and run", doubt, err)
	}

	lk, _ := l.TryObtain(ctx, "b")
	_, _ = lk.MarkRun(ctx, time.Minute, core.RunAgain)
	lk.UnmarkRun(ctx)
	_ = lk.Release(ctx)
	if doubt, err := mark(l, "b", core.RefuseInDoubt); doubt || err != nil {
		t.Fatalf("after a run unmarked: %v, %v; want nothing in doubt", doubt, err)
	}
	if !l.MarksRuns() || l.RecordsInUnit() {
		t.Fatalf("memory store: MarksRuns %v, RecordsInUnit %v; want true, false", l.MarksRuns(), l.RecordsInUnit())
	}
	if _, err := lk.RecordInUnit(ctx, 0, func(context.Context) []byte { return nil }); !errors.Is(err, core.ErrNoUnits) {
		t.Fatalf("RecordInUnit without units: %v; want ErrNoUnits", err)
	}
}

// RecordInUnit commits the record with the release; a nil record rolls
// back and leaves the lock to its holder.
func TestLockRecordInUnit(t *testing.T) {
	ctx := context.Background()
	l := core.NewLocker(memorystore.New().WithUnits())
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := lk.RecordInUnit(ctx, time.Minute, func(context.Context) []byte { return nil }); ok || err != nil {
		t.Fatalf("a nil record: %v, %v; want rolled back", ok, err)
	}
	if ok, err := lk.RecordInUnit(ctx, time.Minute, func(context.Context) []byte { return []byte("r") }); !ok || err != nil {
		t.Fatalf("a record: %v, %v; want it committed", ok, err)
	}
	if err := lk.Release(ctx); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Release after the commit: %v; want ErrNotHeld (the commit released it)", err)
	}
	_, rec, err := l.TryObtainOrRecord(ctx, "k")
	if err != nil || string(rec) != "r" {
		t.Fatalf("the record: %q, %v", rec, err)
	}
}
