package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var unitPromises = []promise{
	{"commit-with-record", unitCommitWithRecord},
	{"holder-only", unitHolderOnly},
	{"holds-past-lease", unitHoldsPastLease},
	{"rollback-keeps-lock", unitRollbackKeepsLock},
	{"panic-rolls-back", unitPanicRollsBack},
	{"locker-once", unitLockerOnce},
}

const unitsMeaning = "it runs no work in a unit that commits with the record: Once's effects elsewhere may land without their record"

// unitRecorder returns the store as a UnitRecorder with units on, or skips.
func (f *fixture) unitRecorder() store.UnitRecorder {
	f.t.Helper()
	f.recorder()
	u := as[store.UnitRecorder](f, "store.UnitRecorder", unitsMeaning)
	if !u.RecordsInUnit() {
		f.t.Skip("the store runs no work in units as set up (RecordsInUnit is false)")
	}
	return u
}

// The record a unit's work returns is written, and the lock released, with
// the unit's commit.
func unitCommitWithRecord(t *testing.T, h Harness) {
	f := open(t, h)
	u := f.unitRecorder()
	l := f.lease(f.key(), h.long())
	g := f.acquire(l)
	err := u.RunInUnit(f.ctx, l.Key, l.Token, g.Fence, h.long(), func(context.Context) []byte {
		f.stillHolds(l, "while its unit runs")
		return []byte("paid")
	})
	if err != nil {
		t.Fatalf("RunInUnit of the holder: %v", err)
	}
	if rec := f.recordOf(f.recorder(), l.Key); !bytes.Equal(rec, []byte("paid")) {
		t.Fatalf("record after the unit committed: %q, want %q", rec, "paid")
	}
}

// A unit begins only for the token that holds the key, with its fence.
func unitHolderOnly(t *testing.T, h Harness) {
	f := open(t, h)
	u := f.unitRecorder()
	l := f.lease(f.key(), h.long())
	g := f.acquire(l)
	ran := false
	work := func(context.Context) []byte { ran = true; return []byte("forged") }
	if err := u.RunInUnit(f.ctx, l.Key, random(), g.Fence, h.long(), work); !errors.Is(err, core.ErrNotHeld) || ran {
		t.Fatalf("RunInUnit with another token: %v (ran: %v), want ErrNotHeld and no run", err, ran)
	}
	if err := u.RunInUnit(f.ctx, l.Key, l.Token, g.Fence+1, h.long(), work); !errors.Is(err, core.ErrNotHeld) || ran {
		t.Fatalf("RunInUnit with another fence: %v (ran: %v), want ErrNotHeld and no run", err, ran)
	}
	f.stillHolds(l, "after refused units")
	f.release(l)
	if rec := f.recordOf(f.recorder(), l.Key); rec != nil {
		t.Fatalf("a refused unit wrote %q", rec)
	}
}

// While a unit is open, nobody takes the key, even once its lease ran
// out; a unit whose lease ran out commits nothing, and the key is free once
// it ended.
func unitHoldsPastLease(t *testing.T, h Harness) {
	f := open(t, h)
	u := f.unitRecorder()
	l := f.lease(f.key(), h.short())
	g := f.acquire(l)
	err := u.RunInUnit(f.ctx, l.Key, l.Token, g.Fence, h.long(), func(context.Context) []byte {
		f.waitFor("the lease to run out", func() bool {
			_, err := f.s.TTL(f.ctx, l.Key, l.Token)
			return errors.Is(err, core.ErrNotHeld)
		})
		f.mustBeTaken(l.Key, "a unit is open on a lapsed lease")
		return []byte("late")
	})
	if !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("the commit of a unit whose lease ran out: %v, want ErrNotHeld", err)
	}
	f.awaitFree(l.Key, "the unit ended")
	if rec := f.recordOf(f.recorder(), l.Key); rec != nil {
		t.Fatalf("a unit whose lease ran out wrote %q", rec)
	}
}

// Work that returns no record rolls its unit back: the lock stays the
// holder's, and nothing is recorded.
func unitRollbackKeepsLock(t *testing.T, h Harness) {
	f := open(t, h)
	u := f.unitRecorder()
	l := f.lease(f.key(), h.long())
	g := f.acquire(l)
	if err := u.RunInUnit(f.ctx, l.Key, l.Token, g.Fence, h.long(), func(context.Context) []byte { return nil }); err != nil {
		t.Fatalf("RunInUnit rolled back: %v", err)
	}
	f.stillHolds(l, "after its unit rolled back")
	f.release(l)
	if rec := f.recordOf(f.recorder(), l.Key); rec != nil {
		t.Fatalf("a unit rolled back wrote %q", rec)
	}
}

// A panic in the work rolls the unit back and goes on up; the key is the
// lease's again, free once it runs out.
func unitPanicRollsBack(t *testing.T, h Harness) {
	f := open(t, h)
	u := f.unitRecorder()
	l := f.lease(f.key(), h.short())
	g := f.acquire(l)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the work's panic did not go on up")
			}
		}()
		_ = u.RunInUnit(f.ctx, l.Key, l.Token, g.Fence, h.long(), func(context.Context) []byte { panic("boom") })
	}()
	f.awaitFree(l.Key, "the lease of a unit that panicked ran out")
}

// Through a Locker: Once runs in a unit, once; later callers get its
// record.
func unitLockerOnce(t *testing.T, h Harness) {
	f := open(t, h)
	f.unitRecorder()
	l := f.locker()
	key := random()
	runs := 0
	for i := range 3 {
		out, err := l.Once(f.ctx, key, h.long(), func(context.Context) ([]byte, error) {
			runs++
			return []byte("result"), nil
		})
		if err != nil || string(out.Value) != "result" || out.Replayed != (i > 0) || out.InDoubt {
			t.Fatalf("Once #%d: %+v, %v", i, out, err)
		}
	}
	if runs != 1 {
		t.Fatalf("Once ran its function %d times, want 1", runs)
	}
}
