package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var runPromises = []promise{
	{"lost-run-in-doubt", runLostInDoubt},
	{"clean-end", runCleanEnd},
	{"own-mark", runOwnMark},
	{"holder-only", runHolderOnly},
	{"forget", runForget},
	{"retention", runRetention},
	{"locker-once", runLockerOnce},
}

const runsMeaning = "it cannot tell a run in doubt: Once after a lost run runs again without a word, and RefuseInDoubt is refused"

func (f *fixture) marker() store.RunMarker {
	f.t.Helper()
	f.recorder()
	return as[store.RunMarker](f, "store.RunMarker", runsMeaning)
}

// markRun is MarkRun that must succeed.
func (f *fixture) markRun(m store.RunMarker, l store.Lease, retention time.Duration, again bool) bool {
	f.t.Helper()
	doubt, err := m.MarkRun(f.ctx, l.Key, l.Token, retention, again)
	if err != nil {
		f.t.Fatalf("MarkRun by the holder: %v", err)
	}
	return doubt
}

// A run that lost its lock without a record or a clean end leaves its mark:
// the next holder is told it is in doubt, and so is every holder after
// that one while none runs again; one that runs again (again) puts its
// own mark in its place.
func runLostInDoubt(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.marker()
	first := f.lease(f.key(), h.short())
	f.acquire(first)
	if f.markRun(m, first, h.long(), false) {
		t.Fatal("the first run of a key is in doubt; nothing ran before it")
	}
	next := f.takenOver(first)
	if !f.markRun(m, next, h.long(), false) {
		t.Fatal("the holder after a run that lost its lock is not told it is in doubt")
	}
	f.release(next)
	refused := f.lease(next.Key, h.long())
	f.acquire(refused)
	if !f.markRun(m, refused, h.long(), true) {
		t.Fatal("a refusal cleared the mark: the holder after it is not told the run is in doubt")
	}
	// refused ran again and lost its lock too: its own mark is there now.
	f.release(refused)
	last := f.lease(next.Key, h.long())
	f.acquire(last)
	if !f.markRun(m, last, h.long(), false) {
		t.Fatal("the run that ran again and ended without a record left no mark")
	}
	f.release(last)
}

// A run that ended cleanly (UnmarkRun) or with a record leaves nothing in
// doubt.
func runCleanEnd(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.marker()
	r := f.recorder()
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	f.markRun(m, l, h.long(), false)
	if err := m.UnmarkRun(f.ctx, l.Key, l.Token); err != nil {
		t.Fatalf("UnmarkRun by the holder: %v", err)
	}
	f.release(l)
	next := f.lease(l.Key, h.long())
	f.acquire(next)
	if f.markRun(m, next, h.short(), false) {
		t.Fatal("the run after one that cleared its mark is in doubt")
	}
	if err := r.ReleaseRecording(f.ctx, next.Key, next.Token, []byte("done"), h.short()); err != nil {
		t.Fatal(err)
	}
	// The record goes at the end of its retention; the mark, of the same
	// retention, must not outlive it, or the next run is told of a doubt
	// the record settled.
	time.Sleep(h.short())
	var after store.Lease
	f.waitFor("the record's retention to end", func() bool {
		after = f.lease(l.Key, h.long())
		g, rec, err := r.AcquireOrRecord(f.ctx, after)
		if err != nil {
			t.Fatalf("AcquireOrRecord: %v", err)
		}
		return rec == nil && g.Fence != 0
	})
	if f.markRun(m, after, h.long(), false) {
		t.Fatal("the run after one that recorded is in doubt once the record went")
	}
	f.release(after)
}

// A retried MarkRun (its answer was lost) finds its own mark, no doubt.
func runOwnMark(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.marker()
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	f.markRun(m, l, h.long(), false)
	if f.markRun(m, l, h.long(), false) {
		t.Fatal("a retried MarkRun is in doubt of its own run")
	}
	f.release(l)
}

// Only the holder marks or clears a run.
func runHolderOnly(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.marker()
	l := f.lease(f.key(), h.long())
	if _, err := m.MarkRun(f.ctx, l.Key, l.Token, h.long(), false); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("MarkRun of a key not held: %v, want ErrNotHeld", err)
	}
	f.acquire(l)
	if f.markRun(m, l, h.long(), false) {
		t.Fatal("a refused MarkRun left a mark")
	}
	if err := m.UnmarkRun(f.ctx, l.Key, random()); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("UnmarkRun with another token: %v, want ErrNotHeld", err)
	}
	f.release(l)
	next := f.lease(l.Key, h.long())
	f.acquire(next)
	if !f.markRun(m, next, h.long(), false) {
		t.Fatal("an UnmarkRun with another token cleared the mark")
	}
	f.release(next)
}

// ForgetRun clears a mark whoever holds the key.
func runForget(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.marker()
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	f.markRun(m, l, h.long(), false)
	if err := m.ForgetRun(f.ctx, l.Key); err != nil {
		t.Fatalf("ForgetRun: %v", err)
	}
	f.release(l)
	next := f.lease(l.Key, h.long())
	f.acquire(next)
	if f.markRun(m, next, h.long(), false) {
		t.Fatal("the run after a ForgetRun is in doubt")
	}
	f.release(next)
	if err := m.ForgetRun(f.ctx, f.key()); err != nil {
		t.Fatalf("ForgetRun of a key without a mark: %v", err)
	}
}

// A mark is kept for its retention, then goes.
func runRetention(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.marker()
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	f.markRun(m, l, h.short(), false)
	f.release(l)
	time.Sleep(h.short())
	f.waitFor("the mark's retention to end", func() bool {
		next := f.lease(l.Key, h.long())
		f.acquire(next)
		defer f.release(next)
		return !f.markRun(m, next, h.long(), false)
	})
}

// Through a Locker: a Once whose lock was lost during its run returns an
// error that is ErrLockLost and its function's own, on one line; the next
// Once is told the run is in doubt, and refuses (RefuseInDoubt) or runs
// again (RunAgain), saying so; Locker.ForgetRun clears the doubt.
func runLockerOnce(t *testing.T, h Harness) {
	f := open(t, h)
	f.marker()
	if u, ok := f.s.(store.UnitRecorder); ok && u.RecordsInUnit() {
		t.Skip("Once runs in the store's units, which leave no run in doubt (see units/)")
	}
	key := random()
	errDeclined := errors.New("card declined")
	lost := f.locker(core.WithTTL(h.short()), core.WithoutWatchdog())
	_, err := lost.Once(f.ctx, key, h.long(), func(ctx context.Context) ([]byte, error) {
		<-ctx.Done() // the lease runs out: the lock is lost
		return nil, errDeclined
	})
	if !errors.Is(err, core.ErrLockLost) || !errors.Is(err, errDeclined) {
		t.Fatalf("Once whose lock was lost: %v; want both ErrLockLost and the function's error", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("Once's error %q takes more than one line", err)
	}
	time.Sleep(h.short()) // the store's lease ends too

	runs := 0
	count := func(context.Context) ([]byte, error) { runs++; return []byte("paid"), nil }
	refuse := f.locker(core.WithDoubtPolicy(core.RefuseInDoubt))
	for range 2 {
		out, err := refuse.Once(f.ctx, key, h.long(), count)
		if !errors.Is(err, core.ErrInDoubt) || !out.InDoubt || runs != 0 {
			t.Fatalf("Once after a lost run, refusing: %+v, %v, %d runs; want ErrInDoubt, InDoubt and no run", out, err, runs)
		}
	}
	again := f.locker()
	out, err := again.Once(f.ctx, key, h.long(), count)
	if err != nil || !out.InDoubt || out.Replayed || runs != 1 {
		t.Fatalf("Once after a lost run, running again: %+v, %v, %d runs; want a run that says InDoubt", out, err, runs)
	}
	out, err = refuse.Once(f.ctx, key, h.long(), count)
	if err != nil || !out.Replayed || out.InDoubt || string(out.Value) != "paid" || runs != 1 {
		t.Fatalf("Once after the run again recorded: %+v, %v, %d runs; want its record", out, err, runs)
	}

	// An operator settles a doubt by hand.
	other := random()
	_, _ = lost.Once(f.ctx, other, h.long(), func(ctx context.Context) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	time.Sleep(h.short())
	if err := refuse.ForgetRun(f.ctx, other); err != nil {
		t.Fatalf("Locker.ForgetRun: %v", err)
	}
	if out, err := refuse.Once(f.ctx, other, h.long(), count); err != nil || out.InDoubt || runs != 2 {
		t.Fatalf("Once after ForgetRun: %+v, %v, %d runs; want a plain run", out, err, runs)
	}
}
