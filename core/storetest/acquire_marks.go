package storetest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// The run marked in the acquire's own round trip (store.AcquireMarker): the
// same marks as MarkRun's, told in Grant.InDoubt, and none left by an
// acquire whose run never started.
var acquireMarkPromises = []promise{
	{"first-run", acquireMarkFirstRun},
	{"refused-keeps-mark", acquireMarkRefusedKeeps},
	{"again-renews", acquireMarkAgainRenews},
	{"own-copy", acquireMarkOwnCopy},
	{"nothing-taken", acquireMarkNothingTaken},
	{"queued", acquireMarkQueued},
	{"cancel", acquireMarkCancel},
	{"leave", acquireMarkLeave},
	{"locker-unstarted", acquireMarkLockerUnstarted},
	{"locker-once", acquireMarkLockerOnce},
	{"late-acquire", acquireMarkLate},
}

const acquireMarksMeaning = "a first run of a recorded key pays a round trip of its own for its mark (MarkRun)"

// acquireMarker returns the fixture's store as an AcquireMarker that
// honours Lease.Mark, or skips the test.
func (f *fixture) acquireMarker() store.AcquireMarker {
	f.t.Helper()
	f.marker()
	m := as[store.AcquireMarker](f, "store.AcquireMarker", acquireMarksMeaning)
	if !m.MarksOnAcquire() {
		f.t.Skipf("the store does not mark runs on acquire in this setup (MarksOnAcquire is false): %s", acquireMarksMeaning)
	}
	return m
}

// marking is l asking its acquire to mark the run.
func marking(l store.Lease, retention time.Duration, again bool) store.Lease {
	l.Mark = store.RunMark{Retention: retention, Again: again}
	return l
}

// acquireMarking is AcquireOrRecord of a free key without a record, with
// the run marked, that must take the lock; it returns Grant.InDoubt.
func (f *fixture) acquireMarking(l store.Lease, retention time.Duration, again bool) bool {
	f.t.Helper()
	g, rec, err := f.recorder().AcquireOrRecord(f.ctx, marking(l, retention, again))
	if err != nil || rec != nil || g.Fence == 0 {
		f.t.Fatalf("AcquireOrRecord of a free key, marking the run: %+v, record %q, %v", g, rec, err)
	}
	return g.InDoubt
}

// inDoubt reports whether the next holder of key, a free key, is told a run
// is in doubt. The probe leaves the key as it found it: its MarkRun
// (without again) keeps a mark it finds, and it clears its own.
func (f *fixture) inDoubt(m store.RunMarker, key string) bool {
	f.t.Helper()
	probe := f.lease(key, f.h.long())
	f.acquire(probe)
	defer f.release(probe)
	doubt := f.markRun(m, probe, f.h.long(), false)
	if !doubt {
		if err := m.UnmarkRun(f.ctx, probe.Key, probe.Token); err != nil {
			f.t.Fatalf("UnmarkRun by the probe: %v", err)
		}
	}
	return doubt
}

// lostRun leaves a run of key in doubt: marked by MarkRun, then released
// without a record or a clean end.
func (f *fixture) lostRun(m store.RunMarker, key string, retention time.Duration) {
	f.t.Helper()
	l := f.lease(key, f.h.long())
	f.acquire(l)
	f.markRun(m, l, retention, false)
	f.release(l)
}

// The first run of a key, marked by its acquire, is no doubt, and its mark
// is MarkRun's: the holder's own MarkRun finds it its own, a run that ends
// without a record or a clean end leaves the next holder in doubt, and a
// clean end clears it.
func acquireMarkFirstRun(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.acquireMarker()
	key := f.key()
	first := f.lease(key, h.long())
	if f.acquireMarking(first, h.long(), false) {
		t.Fatal("the first run of a key is in doubt; nothing ran before it")
	}
	if f.markRun(m, first, h.long(), false) {
		t.Fatal("MarkRun after the acquire marked the run finds another run's mark")
	}
	f.release(first)
	if !f.inDoubt(m, key) {
		t.Fatal("a run marked by its acquire that ended without a record left nothing in doubt")
	}
	again := f.lease(key, h.long())
	if !f.acquireMarking(again, h.long(), true) {
		t.Fatal("the holder after a run that ended without a record is not told it is in doubt")
	}
	if err := m.UnmarkRun(f.ctx, again.Key, again.Token); err != nil {
		t.Fatalf("UnmarkRun by the holder: %v", err)
	}
	f.release(again)
	if f.inDoubt(m, key) {
		t.Fatal("a run marked by its acquire that ended cleanly left a run in doubt")
	}
}

// Without again, the mark of a run in doubt stays as it is: the holder is
// told, and so is the holder after it.
func acquireMarkRefusedKeeps(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.acquireMarker()
	key := f.key()
	f.lostRun(m, key, h.long())
	refused := f.lease(key, h.long())
	if !f.acquireMarking(refused, h.long(), false) {
		t.Fatal("the holder after a lost run is not told it is in doubt")
	}
	if !f.markRun(m, refused, h.long(), false) {
		t.Fatal("an acquire without again put its own mark in place of the run in doubt")
	}
	f.release(refused)
	if !f.inDoubt(m, key) {
		t.Fatal("a refusal cleared the mark: the holder after it is not told the run is in doubt")
	}
}

// With again, the run goes ahead in doubt and the mark's retention starts
// again: if that run too ends without a record, the next holder is told,
// for the whole retention from that run on.
func acquireMarkAgainRenews(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.acquireMarker()
	key := f.key()
	f.lostRun(m, key, h.short())
	again := f.lease(key, h.long())
	if !f.acquireMarking(again, h.long(), true) {
		t.Fatal("the holder after a lost run, running again, is not told it is in doubt")
	}
	f.release(again) // and it lost its lock too
	time.Sleep(h.short())
	if !f.inDoubt(m, key) {
		t.Fatal("the run that ran again and ended without a record left nothing in doubt once the first mark's retention ended")
	}
}

// A copy of the acquire that lands after the first (a resent command) finds
// its own mark: no doubt.
func acquireMarkOwnCopy(t *testing.T, h Harness) {
	f := open(t, h)
	f.acquireMarker()
	l := f.lease(f.key(), h.long())
	f.acquireMarking(l, h.long(), false)
	if f.acquireMarking(l, h.long(), false) {
		t.Fatal("a copy of the acquire is in doubt of its own run")
	}
	f.release(l)
}

// An acquire that finds the key taken, or its record, marks nothing.
func acquireMarkNothingTaken(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.acquireMarker()
	r := f.recorder()
	key := f.key()
	holder := f.lease(key, h.long())
	f.acquire(holder)
	if g, rec, err := r.AcquireOrRecord(f.ctx, marking(f.lease(key, h.long()), h.long(), true)); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("AcquireOrRecord of a held key, marking: %+v, %q, %v; want ErrNotObtained", g, rec, err)
	}
	f.release(holder)
	if f.inDoubt(m, key) {
		t.Fatal("an acquire that found the key taken marked a run")
	}

	recorded := f.lease(key, h.long())
	f.acquire(recorded)
	if err := r.ReleaseRecording(f.ctx, key, recorded.Token, []byte("done"), h.long()); err != nil {
		t.Fatal(err)
	}
	g, rec, err := r.AcquireOrRecord(f.ctx, marking(f.lease(key, h.long()), h.long(), true))
	if err != nil || string(rec) != "done" || g.Fence != 0 || g.InDoubt {
		t.Fatalf("AcquireOrRecord of a recorded key, marking: %+v, %q, %v; want the record", g, rec, err)
	}
	if f.inDoubt(m, key) {
		t.Fatal("an acquire that found the record marked a run")
	}
}

// A waiter in line that is handed the key marks its run as it claims it,
// and is told of a run in doubt before it.
func acquireMarkQueued(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.acquireMarker()
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	// claim has a waiter, marking, stand in line behind a holder (whose run
	// is in doubt when lost) and claim the key its release hands over.
	claim := func(key string, lost bool) (store.Lease, bool) {
		t.Helper()
		holder := f.lease(key, h.long())
		f.acquire(holder)
		if lost {
			f.markRun(m, holder, h.long(), false)
		}
		waiter := waiterIn(random())
		if _, _, err := w.AcquireQueued(f.ctx, marking(f.waitLease(key, waiter), h.long(), false), waiter, true); !errors.Is(err, core.ErrNotObtained) {
			t.Fatalf("AcquireQueued of a held key, marking: %v; want ErrNotObtained", err)
		}
		f.release(holder) // hands the key to the waiter
		l := marking(f.waitLease(key, waiter), h.long(), false)
		g, rec, err := w.AcquireQueued(f.ctx, l, waiter, true)
		if err != nil || rec != nil || g.Fence == 0 {
			t.Fatalf("the waiter claims the key handed to it, marking: %+v, %q, %v", g, rec, err)
		}
		return l, g.InDoubt
	}

	key := f.key()
	l, doubt := claim(key, true)
	if !doubt {
		t.Fatal("a waiter handed the key after a lost run is not told it is in doubt")
	}
	if err := m.UnmarkRun(f.ctx, l.Key, l.Token); err != nil {
		t.Fatalf("UnmarkRun by the waiter: %v", err)
	}
	f.release(l)
	if f.inDoubt(m, key) {
		t.Fatal("the waiter's run ended cleanly, and a run is in doubt")
	}

	other := f.key()
	l, doubt = claim(other, false)
	if doubt {
		t.Fatal("a waiter handed the key after a run with no mark is told it is in doubt")
	}
	f.release(l) // without a record or a clean end
	if !f.inDoubt(m, other) {
		t.Fatal("the waiter handed the key left no mark of its run")
	}
}

// Cancel takes back the mark of the acquire it undoes, and leaves the mark
// of a run in doubt before it.
func acquireMarkCancel(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.acquireMarker()
	c := as[store.Canceler](f, "store.Canceler", cancelMeaning)
	key := f.key()
	l := f.lease(key, h.long())
	f.acquireMarking(l, h.long(), false)
	if err := c.Cancel(f.ctx, l); err != nil {
		t.Fatalf("Cancel of an acquire that marked its run: %v", err)
	}
	if f.inDoubt(m, key) {
		t.Fatal("a cancelled acquire left the mark of a run that never started")
	}

	f.lostRun(m, key, h.long())
	again := f.lease(key, h.long())
	f.acquireMarking(again, h.long(), true)
	if err := c.Cancel(f.ctx, again); err != nil {
		t.Fatalf("Cancel of an acquire that ran again over a run in doubt: %v", err)
	}
	if !f.inDoubt(m, key) {
		t.Fatal("a cancel cleared the mark of the run in doubt before it")
	}
}

// A waiter that leaves takes back the mark an acquire of its name made: its
// run never started.
func acquireMarkLeave(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.acquireMarker()
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	key := f.key()
	holder := f.lease(key, h.long())
	f.acquire(holder)
	waiter := waiterIn(random())
	l := f.lease(key, h.long())
	l.Token = store.HandedOverToken(waiter) // the name a Granter's waiter carries
	if _, _, err := w.AcquireQueued(f.ctx, marking(l, h.long(), false), waiter, true); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("AcquireQueued of a held key, marking: %v; want ErrNotObtained", err)
	}
	f.release(holder)
	if g, _, err := w.AcquireQueued(f.ctx, marking(l, h.long(), false), waiter, true); err != nil || g.Fence == 0 {
		t.Fatalf("the waiter claims the key handed to it, marking: %+v, %v", g, err)
	}
	if err := w.Leave(f.ctx, key, waiter); err != nil {
		t.Fatalf("Leave of the waiter that took the key: %v", err)
	}
	f.awaitFree(key, "the key the waiter left")
	if f.inDoubt(m, key) {
		t.Fatal("a waiter that left kept the mark of a run that never started")
	}
}

// Through a Locker under ContextWithRunMark: a lock released before its run
// started (MarkRun) takes back its acquire's mark; one whose run started
// leaves it.
func acquireMarkLockerUnstarted(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.acquireMarker()
	l := f.locker()
	ctx := core.ContextWithRunMark(f.ctx, h.long(), core.RunAgain)
	key := random()
	skey, _ := l.StoreKey(key)
	lk, _, err := l.TryObtainOrRecord(ctx, key)
	if err != nil || lk == nil {
		t.Fatalf("TryObtainOrRecord of a fresh key: %v %v", lk, err)
	}
	if err := lk.Release(f.ctx); err != nil {
		t.Fatal(err)
	}
	if f.inDoubt(m, skey) {
		t.Fatal("a lock released before its run started left its acquire's mark")
	}
	lk, _, err = l.TryObtainOrRecord(ctx, key)
	if err != nil || lk == nil {
		t.Fatalf("TryObtainOrRecord of a free key: %v %v", lk, err)
	}
	if doubt, err := lk.MarkRun(f.ctx, h.long(), core.RunAgain); err != nil || doubt {
		t.Fatalf("MarkRun of the first run: %v, %v", doubt, err)
	}
	if err := lk.Release(f.ctx); err != nil {
		t.Fatal(err)
	}
	if !f.inDoubt(m, skey) {
		t.Fatal("a run that started and ended without a record left nothing in doubt")
	}
}

// markCalls is a store that counts its MarkRun round trips; it forwards
// what Once uses.
type markCalls struct {
	core.Store
	r     store.Recorder
	m     store.AcquireMarker
	calls atomic.Int32
}

func (s *markCalls) AcquireOrRecord(ctx context.Context, l store.Lease) (store.Grant, []byte, error) {
	return s.r.AcquireOrRecord(ctx, l)
}

func (s *markCalls) ReleaseRecording(ctx context.Context, key, token string, record []byte, retention time.Duration) error {
	return s.r.ReleaseRecording(ctx, key, token, record, retention)
}

func (s *markCalls) MarkRun(ctx context.Context, key, token string, retention time.Duration, again bool) (bool, error) {
	s.calls.Add(1)
	return s.m.MarkRun(ctx, key, token, retention, again)
}

func (s *markCalls) UnmarkRun(ctx context.Context, key, token string) error {
	return s.m.UnmarkRun(ctx, key, token)
}

func (s *markCalls) ForgetRun(ctx context.Context, key string) error { return s.m.ForgetRun(ctx, key) }

func (s *markCalls) MarksOnAcquire() bool { return true }

// Once marks its runs in the acquire's round trip: no MarkRun, and still a
// run that lost its lock leaves the next Once in doubt.
func acquireMarkLockerOnce(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.acquireMarker()
	s := &markCalls{Store: f.s, r: f.recorder(), m: m}
	key := random()
	lost := f.lockerOn(s, core.WithTTL(h.short()), core.WithoutWatchdog())
	_, err := lost.Once(f.ctx, key, h.long(), func(ctx context.Context) ([]byte, error) {
		<-ctx.Done() // the lease runs out: the lock is lost
		return nil, ctx.Err()
	})
	if !errors.Is(err, core.ErrLockLost) {
		t.Fatalf("Once whose lock was lost: %v", err)
	}
	time.Sleep(h.short()) // the store's lease ends too
	refuse := f.lockerOn(s, core.WithDoubtPolicy(core.RefuseInDoubt))
	if out, err := refuse.Once(f.ctx, key, h.long(), func(context.Context) ([]byte, error) { return nil, nil }); !errors.Is(err, core.ErrInDoubt) || !out.InDoubt {
		t.Fatalf("Once after a lost run, refusing: %+v, %v; want ErrInDoubt", out, err)
	}
	if n := s.calls.Load(); n != 0 {
		t.Fatalf("Once made %d MarkRun round trips; its acquires mark the run", n)
	}
}

// cancelMarker adds the store's run marks to cancelRecorder.
type cancelMarker struct {
	cancelRecorder
	m store.AcquireMarker
}

func (s cancelMarker) MarkRun(ctx context.Context, key, token string, retention time.Duration, again bool) (bool, error) {
	return s.m.MarkRun(ctx, key, token, retention, again)
}

func (s cancelMarker) UnmarkRun(ctx context.Context, key, token string) error {
	return s.m.UnmarkRun(ctx, key, token)
}

func (s cancelMarker) ForgetRun(ctx context.Context, key string) error {
	return s.m.ForgetRun(ctx, key)
}

func (s cancelMarker) MarksOnAcquire() bool { return s.m.MarksOnAcquire() }

// An acquire that marks the run, whose caller gave up while its bytes were
// held, lands after the Locker's cancel: it takes nothing and marks
// nothing.
func acquireMarkLate(t *testing.T, h Harness) {
	f := open(t, h)
	m := f.acquireMarker()
	slow, seen, _ := slowLocker(t, f, true)
	sm, ok := slow.Store.(store.AcquireMarker)
	if !ok || !sm.MarksOnAcquire() {
		t.Fatal("the Slow hook's store does not mark runs on acquire, though the harness's stores do")
	}
	l := f.lockerOn(cancelMarker{cancelRecorder{seen}, sm}, core.WithTTL(h.long()))
	ctx := core.ContextWithRunMark(f.ctx, h.long(), core.RunAgain)
	_, skey, land := f.givenUpRecordAcquire(ctx, slow, seen, l)
	land()
	f.mustBeFree(skey, "after the given-up acquire landed")
	if f.inDoubt(m, skey) {
		t.Fatal("the given-up acquire landed and left a mark of a run that never started")
	}
}
