package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

var recordPromises = []promise{
	{"record-instead-of-lock", recordInsteadOfLock},
	{"fenced-write", recordFencedWrite},
	{"fenced-write-after-expiry", recordFencedWriteAfterExpiry},
	{"empty", recordEmpty},
	{"retention", recordRetention},
	{"queued", recordQueued},
	{"locker-once", recordLockerOnce},
}

const recordsMeaning = "it keeps no records: idempotent replay is off for it"

func (f *fixture) recorder() store.Recorder {
	f.t.Helper()
	return as[store.Recorder](f, "store.Recorder", recordsMeaning)
}

// recordOf asks key for its record with a fresh token: the record, or nil
// and the lock taken (which is given back).
func (f *fixture) recordOf(r store.Recorder, key string) []byte {
	f.t.Helper()
	l := f.lease(key, f.h.long())
	g, rec, err := r.AcquireOrRecord(f.ctx, l)
	if err != nil {
		f.t.Fatalf("AcquireOrRecord: %v", err)
	}
	if rec != nil {
		if g != (store.Grant{}) {
			f.t.Fatalf("AcquireOrRecord returned a record and a grant %+v: a record comes with a zero Grant", g)
		}
		return rec
	}
	if g.Fence == 0 {
		f.t.Fatalf("AcquireOrRecord returned neither a record nor a grant (fence 0)")
	}
	f.release(l)
	return nil
}

// The holder's ReleaseRecording writes the record and frees the key; an
// acquire that asks for the record then gets it and takes nothing, one that
// does not ask takes the lock.
func recordInsteadOfLock(t *testing.T, h Harness) {
	f := open(t, h)
	r := f.recorder()
	l := f.lease(f.key(), h.long())
	g, rec, err := r.AcquireOrRecord(f.ctx, l)
	if err != nil || rec != nil || g.Fence == 0 {
		t.Fatalf("AcquireOrRecord of a free key with no record: %+v, %q, %v; want the lock", g, rec, err)
	}
	if err := r.ReleaseRecording(f.ctx, l.Key, l.Token, []byte("paid"), h.long()); err != nil {
		t.Fatalf("ReleaseRecording by the holder: %v", err)
	}
	if _, err := f.s.TTL(f.ctx, l.Key, l.Token); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("TTL after ReleaseRecording: %v; the release must free the lock", err)
	}
	for range 2 {
		if got := f.recordOf(r, l.Key); !bytes.Equal(got, []byte("paid")) {
			t.Fatalf("record %q, want %q", got, "paid")
		}
	}
	f.mustBeFree(l.Key, "a key with a record, for an acquire that does not ask for it")
}

// A token that does not hold the lock writes nothing, and the holder keeps
// its lock.
func recordFencedWrite(t *testing.T, h Harness) {
	f := open(t, h)
	r := f.recorder()
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	if err := r.ReleaseRecording(f.ctx, l.Key, random(), []byte("forged"), h.long()); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("ReleaseRecording with another token: %v, want ErrNotHeld", err)
	}
	if err := r.ReleaseRecording(f.ctx, f.key(), l.Token, []byte("forged"), h.long()); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("ReleaseRecording of a key not held: %v, want ErrNotHeld", err)
	}
	f.stillHolds(l, "after a ReleaseRecording with another token")
	f.release(l)
	if got := f.recordOf(r, l.Key); got != nil {
		t.Fatalf("a ReleaseRecording that was refused wrote %q", got)
	}
}

// A holder whose lease ran out and was taken over writes nothing.
func recordFencedWriteAfterExpiry(t *testing.T, h Harness) {
	f := open(t, h)
	r := f.recorder()
	old := f.lease(f.key(), h.short())
	f.acquire(old)
	next := f.takenOver(old)
	if err := r.ReleaseRecording(f.ctx, old.Key, old.Token, []byte("stale"), h.long()); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("ReleaseRecording by the holder whose lease ran out: %v, want ErrNotHeld", err)
	}
	f.stillHolds(next, "after a stale ReleaseRecording")
	f.release(next)
	if got := f.recordOf(r, old.Key); got != nil {
		t.Fatalf("a stale ReleaseRecording wrote %q", got)
	}
}

// A record with no bytes is a record: never nil, or it reads as a grant
// of fence 0 on a key nobody holds.
func recordEmpty(t *testing.T, h Harness) {
	f := open(t, h)
	r := f.recorder()
	for name, written := range map[string][]byte{"nil": nil, "empty": {}} {
		l := f.lease(f.key(), h.long())
		f.acquire(l)
		if err := r.ReleaseRecording(f.ctx, l.Key, l.Token, written, h.long()); err != nil {
			t.Fatalf("%s record: ReleaseRecording: %v", name, err)
		}
		g, rec, err := r.AcquireOrRecord(f.ctx, f.lease(l.Key, h.long()))
		if err != nil || rec == nil || len(rec) != 0 || g != (store.Grant{}) {
			t.Fatalf("%s record: AcquireOrRecord: %+v, %#v, %v; want a zero Grant and a non-nil empty record", name, g, rec, err)
		}
	}
}

// A record is kept for its retention, and then goes: the key's next
// acquire takes the lock again, within a slack of the suite's short lease
// (the store's clock grain) after the retention ends. Each bound is checked
// only where the timings prove it broken: a record gone in an answer that
// came back sooner than the retention after the write was sent, or still
// there in an answer to an acquire sent later than the retention and the
// slack after the write returned.
func recordRetention(t *testing.T, h Harness) {
	f := open(t, h)
	r := f.recorder()
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	retention, slack := 2*h.short(), h.short()
	sent := time.Now()
	if err := r.ReleaseRecording(f.ctx, l.Key, l.Token, []byte("done"), retention); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	for {
		at := time.Now()
		got := f.recordOf(r, l.Key)
		if got == nil {
			if kept := time.Since(sent); kept < retention {
				t.Fatalf("the record was gone %v after it was written, before its retention of %v", kept, retention)
			}
			return
		}
		if !bytes.Equal(got, []byte("done")) {
			t.Fatalf("record %q, want %q", got, "done")
		}
		if late := at.Sub(written); late > retention+slack {
			t.Fatalf("the record was still there %v after it was written: its retention is %v, and it must be gone within %v of its end",
				late, retention, slack)
		}
		time.Sleep(h.short() / 20)
	}
}

// A waiter in line that asks for the record gets it, and does not join the
// line (Waker with withRecord).
func recordQueued(t *testing.T, h Harness) {
	f := open(t, h)
	r := f.recorder()
	w := as[store.Waker](f, "store.Waker", linesMeaning)
	l := f.lease(f.key(), h.long())
	f.acquire(l)
	if err := r.ReleaseRecording(f.ctx, l.Key, l.Token, []byte("sent"), h.long()); err != nil {
		t.Fatal(err)
	}
	g, rec, err := w.AcquireQueued(f.ctx, f.lease(l.Key, h.long()), "storetest/"+random(), true)
	if err != nil || !bytes.Equal(rec, []byte("sent")) || g != (store.Grant{}) {
		t.Fatalf("AcquireQueued asking for the record: %+v, %q, %v; want the record", g, rec, err)
	}
	f.mustBeFree(l.Key, "after a waiter got the record")
}

// Through a Locker: Once runs its function once per key within the
// retention; later callers get the recorded result.
func recordLockerOnce(t *testing.T, h Harness) {
	f := open(t, h)
	f.recorder()
	l := f.locker()
	key := random()
	runs := 0
	for i := range 3 {
		out, err := l.Once(f.ctx, key, h.long(), func(context.Context) ([]byte, error) {
			runs++
			return []byte("result"), nil
		})
		if err != nil || string(out.Value) != "result" {
			t.Fatalf("Once %d: %q, %v", i, out.Value, err)
		}
	}
	if runs != 1 {
		t.Fatalf("Once ran its function %d times, want 1", runs)
	}
}
