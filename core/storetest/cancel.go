package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var cancelPromises = []promise{
	{"before-landing", cancelBeforeLanding},
	{"held", cancelHeld},
	{"queued-before-landing", cancelQueuedBeforeLanding},
	{"late-acquire", cancelLateAcquire},
	{"late-record-acquire", cancelLateRecordAcquire},
}

const cancelMeaning = "it says none of its acquires can land after its caller gave up"

// An acquire cancelled before it reached the store takes nothing when it
// gets there: Cancel, then the Acquire with the same token.
func cancelBeforeLanding(t *testing.T, h Harness) {
	f := open(t, h)
	c := as[store.Canceler](f, "store.Canceler", cancelMeaning)
	l := f.lease(f.key(), h.long())
	if err := c.Cancel(f.ctx, l); err != nil && !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Cancel of an acquire not landed yet: %v", err)
	}
	if g, err := f.s.Acquire(f.ctx, l); err == nil {
		_ = f.s.Release(f.ctx, l.Key, l.Token)
		t.Fatalf("the cancelled acquire landed and took the lock (fence %d)", g.Fence)
	}
	if _, err := f.s.TTL(f.ctx, l.Key, l.Token); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("TTL of the cancelled token: %v, want ErrNotHeld", err)
	}
	f.mustBeFree(l.Key, "after a cancelled acquire landed")
}

// Cancel of an acquire that did land frees the lock.
func cancelHeld(t *testing.T, h Harness) {
	f := open(t, h)
	c := as[store.Canceler](f, "store.Canceler", cancelMeaning)
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	if err := c.Cancel(f.ctx, l); err != nil {
		t.Fatalf("Cancel of a held lock: %v", err)
	}
	f.mustBeFree(l.Key, "after the holder's acquire was cancelled")
	if err := c.Cancel(f.ctx, store.Lease{Key: l.Key, Token: random(), TTL: l.TTL}); err != nil && !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Cancel of a token that holds nothing: %v", err)
	}
}

// A waiter that gave up (its attempt cancelled, and it left the line)
// whose queued acquire lands after that, while the key is held, takes
// nothing and does not join the line again: the next release frees the
// key rather than hand it to nobody.
func cancelQueuedBeforeLanding(t *testing.T, h Harness) {
	f := open(t, h)
	c := as[store.Canceler](f, "store.Canceler", cancelMeaning)
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	key := f.key()
	holder := f.lease(key, h.long())
	f.acquire(holder)
	ghost := waiterIn(random())
	l := f.waitLease(key, ghost)
	if err := c.Cancel(f.ctx, l); err != nil && !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Cancel of a queued acquire not landed yet: %v", err)
	}
	if err := w.Leave(f.ctx, key, ghost); err != nil {
		t.Fatalf("Leave of a waiter not in line: %v", err)
	}
	if g, _, err := w.AcquireQueued(f.ctx, l, ghost, false); err == nil {
		t.Fatalf("the cancelled queued acquire took a held lock (fence %d)", g.Fence)
	}
	if in, ok := f.s.(store.Inspector); ok {
		if hd := f.inspect(in, key); hd.Waiting != 0 {
			t.Fatalf("the cancelled queued acquire joined the line: %+v", hd)
		}
	}
	f.release(holder)
	f.mustBeFree(key, "released with only a cancelled waiter's acquire landed in line")
}

// cancelSeen is a store that says when a cancel of an acquire has been
// answered: the Locker's own clean-up runs in the background. It forwards
// Store and Canceler only, all a TryObtain uses.
type cancelSeen struct {
	core.Store
	recorder store.Recorder // nil when the store keeps no records
	seen     chan struct{}
}

func (s *cancelSeen) Cancel(ctx context.Context, l store.Lease) error {
	var err error
	if c, ok := s.Store.(store.Canceler); ok {
		err = c.Cancel(ctx, l)
	} else {
		err = s.Store.Release(ctx, l.Key, l.Token)
	}
	if err == nil || errors.Is(err, core.ErrNotHeld) {
		select {
		case s.seen <- struct{}{}:
		default:
		}
	}
	return err
}

// cancelRecorder adds the store's records to cancelSeen.
type cancelRecorder struct{ *cancelSeen }

func (s cancelRecorder) AcquireOrRecord(ctx context.Context, l store.Lease) (store.Grant, []byte, error) {
	return s.recorder.AcquireOrRecord(ctx, l)
}

func (s cancelRecorder) ReleaseRecording(ctx context.Context, key, token string, record []byte, retention time.Duration) error {
	return s.recorder.ReleaseRecording(ctx, key, token, record, retention)
}

// slowLocker is a Locker over h.Slow's store, whose cancels the test sees.
func slowLocker(t *testing.T, f *fixture, records bool) (Slow, *cancelSeen, *core.Locker) {
	t.Helper()
	if f.h.Slow == nil {
		t.Skip("the harness has no Slow hook: the store's own tests must show that an acquire landing after its caller gave up takes nothing (see the package doc)")
	}
	if records {
		f.recorder()
	}
	slow := f.h.Slow(t)
	seen := &cancelSeen{Store: slow.Store, seen: make(chan struct{}, 1)}
	var s core.Store = seen
	if records {
		r, ok := slow.Store.(store.Recorder)
		if !ok {
			t.Fatal("the Slow hook's store keeps no records, though the harness's stores do")
		}
		seen.recorder = r
		s = cancelRecorder{seen}
	}
	return slow, seen, f.lockerOn(s, core.WithTTL(f.h.long()))
}

// givenUpRecordAcquire warms l up, then sends an acquire of a new key that
// asks for its record (under ctx), whose bytes slow holds until its caller
// gave up and l cancelled it. It returns the key, its store key, and land,
// which lets the held bytes go.
func (f *fixture) givenUpRecordAcquire(ctx context.Context, slow Slow, seen *cancelSeen, l *core.Locker) (key, skey string, land func()) {
	f.t.Helper()
	warm, _, err := l.TryObtainOrRecord(ctx, random())
	if err != nil || warm == nil {
		f.t.Fatalf("warm-up: %v", err)
	}
	_ = warm.Release(f.ctx)
	key = random()
	skey, _ = l.StoreKey(key)
	land = slow.Hold(f.t, skey)
	short, cancel := context.WithTimeout(ctx, giveUp)
	defer cancel()
	if lk, _, err := l.TryObtainOrRecord(short, key); err == nil {
		if lk != nil {
			_ = lk.Release(f.ctx)
		}
		f.t.Fatal("the held acquire was answered: the Slow hook held nothing")
	}
	f.awaitCancel(seen)
	return key, skey, land
}

// awaitCancel waits for the Locker's clean-up of the given-up acquire.
func (f *fixture) awaitCancel(seen *cancelSeen) {
	f.t.Helper()
	select {
	case <-seen.seen:
	case <-time.After(f.h.patience()):
		f.t.Fatalf("the Locker did not cancel the acquire it gave up on within %v", f.h.patience())
	}
}

// giveUp is the wait a caller gives a held acquire.
const giveUp = 100 * time.Millisecond

// An acquire whose caller gave up (its bytes held on the way) is cancelled
// by the Locker; when it lands, it takes nothing, and the key is free.
func cancelLateAcquire(t *testing.T, h Harness) {
	f := open(t, h)
	slow, seen, l := slowLocker(t, f, false)
	// Warm up: connections open and scripts loaded, so that the held
	// command is the acquire itself.
	warm, err := l.TryObtain(f.ctx, random())
	if err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(f.ctx)
	key := random()
	skey, _ := l.StoreKey(key)
	land := slow.Hold(t, skey)
	short, cancel := context.WithTimeout(f.ctx, giveUp)
	defer cancel()
	if lk, err := l.TryObtain(short, key); err == nil {
		_ = lk.Release(f.ctx)
		t.Fatal("the held acquire was answered: the Slow hook held nothing")
	}
	f.awaitCancel(seen)
	land()
	next, err := f.lockerOn(slow.Store).TryObtain(f.ctx, key)
	if err != nil {
		t.Fatalf("after the given-up acquire landed the key is taken (%v): it took the lock for nobody", err)
	}
	_ = next.Release(f.ctx)
}

// The same for an acquire that asks for the record: after someone else
// recorded the work, it lands and takes nothing; the record stays.
func cancelLateRecordAcquire(t *testing.T, h Harness) {
	f := open(t, h)
	slow, seen, l := slowLocker(t, f, true)
	key, _, land := f.givenUpRecordAcquire(f.ctx, slow, seen, l)
	other := f.lockerOn(slow.Store)
	if _, err := other.Once(f.ctx, key, h.long(), func(context.Context) ([]byte, error) { return []byte("done"), nil }); err != nil {
		t.Fatal(err)
	}
	land()
	lk, rec, err := other.TryObtainOrRecord(f.ctx, key)
	if lk != nil {
		_ = lk.Release(f.ctx)
	}
	if err != nil || lk != nil || rec == nil {
		t.Fatalf("after the given-up acquire landed: lock %v, record %q, %v; want the record", lk, rec, err)
	}
	plain, err := other.TryObtain(f.ctx, key)
	if err != nil {
		t.Fatalf("after the given-up acquire landed the key is taken (%v): it took the lock for nobody", err)
	}
	_ = plain.Release(f.ctx)
}
