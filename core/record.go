package core

import (
	"context"
	"errors"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// Records are what idempotent replay stands on: the holder of a lock writes
// the result of the work the lock guarded, in the same round trip as its
// release and only if its token still holds the lock; a later acquire of the
// same key finds the record, in its own one round trip, instead of the lock.
// The record lives beside the lock, under the same {hash tag}.

// DefaultRetention is how long a record is kept unless told otherwise.
const DefaultRetention = 24 * time.Hour

// recorder returns l's store as a Recorder.
func (l *Locker) recorder() (store.Recorder, error) {
	if r, ok := l.store.(store.Recorder); ok {
		return r, nil
	}
	return nil, ErrNoRecords
}

// KeepsRecords reports whether l's store keeps records, so that a caller
// can refuse a configuration that needs them at start-up.
func (l *Locker) KeepsRecords() bool {
	_, err := l.recorder()
	return err == nil
}

// TryObtainOrRecord is TryObtain that returns the key's record instead,
// when it has one: then the lock is nil and nothing is taken. One round
// trip either way.
func (l *Locker) TryObtainOrRecord(ctx context.Context, key string) (*Lock, []byte, error) {
	if l.telemetry != nil {
		return l.telemetry.recordCall(ctx, modeTry, func(ctx context.Context) (*Lock, []byte, error) { return l.tryObtainOrRecord(ctx, key) })
	}
	return l.tryObtainOrRecord(ctx, key)
}

func (l *Locker) tryObtainOrRecord(ctx context.Context, key string) (*Lock, []byte, error) {
	if _, err := l.recorder(); err != nil {
		return nil, nil, err
	}
	skey, err := storeKey(l.prefix, key)
	if err != nil {
		return nil, nil, err
	}
	return l.attempt(ctx, key, skey, true, "")
}

// ObtainOrRecord is Obtain that returns the key's record instead, when it
// has one or when one is written while it waits (the holder it waited for
// recorded its result): then the lock is nil.
func (l *Locker) ObtainOrRecord(ctx context.Context, key string) (*Lock, []byte, error) {
	if l.telemetry != nil {
		return l.telemetry.recordCall(ctx, modeWait, func(ctx context.Context) (*Lock, []byte, error) { return l.obtainOrRecord(ctx, key) })
	}
	return l.obtainOrRecord(ctx, key)
}

func (l *Locker) obtainOrRecord(ctx context.Context, key string) (*Lock, []byte, error) {
	lk, rec, err := l.tryObtainOrRecord(ctx, key)
	var taken *store.NotObtainedError
	if err == nil || !errors.As(err, &taken) {
		return lk, rec, err
	}
	skey, _ := storeKey(l.prefix, key)
	return l.wait(ctx, key, skey, taken, true)
}

// ObtainOrRecordAfter is ObtainOrRecord for a caller whose own
// TryObtainOrRecord just found the key taken (taken is its error): it
// waits without trying again at once.
func (l *Locker) ObtainOrRecordAfter(ctx context.Context, key string, taken error) (*Lock, []byte, error) {
	if l.telemetry != nil {
		return l.telemetry.recordCall(ctx, modeWait, func(ctx context.Context) (*Lock, []byte, error) { return l.obtainOrRecordAfter(ctx, key, taken) })
	}
	return l.obtainOrRecordAfter(ctx, key, taken)
}

func (l *Locker) obtainOrRecordAfter(ctx context.Context, key string, taken error) (*Lock, []byte, error) {
	var no *store.NotObtainedError
	if !errors.As(taken, &no) {
		return l.obtainOrRecord(ctx, key)
	}
	if _, err := l.recorder(); err != nil {
		return nil, nil, err
	}
	skey, err := storeKey(l.prefix, key)
	if err != nil {
		return nil, nil, err
	}
	return l.wait(ctx, key, skey, no, true)
}

// ReleaseRecording writes record for the lock's key, kept for retention
// (DefaultRetention when 0), and releases the lock, in one round trip,
// only if the lock is still ours: ErrNotHeld means it was not (lost,
// expired, taken over), and then nothing was written. A lock known lost is
// not written for at all. When the store does not answer, the write is
// retried in the background, with the same token check, until the lease
// ends, as Release is.
func (lk *Lock) ReleaseRecording(ctx context.Context, record []byte, retention time.Duration) error {
	if lk == nil {
		return ErrNotHeld
	}
	if t := lk.locker.telemetry; t != nil {
		ctx, span := t.startRelease(ctx)
		err := lk.releaseRecording(ctx, record, retention)
		endRelease(span, lk, err)
		return err
	}
	return lk.releaseRecording(ctx, record, retention)
}

func (lk *Lock) releaseRecording(ctx context.Context, record []byte, retention time.Duration) error {
	l := lk.locker
	r, err := l.recorder()
	if err != nil {
		return err
	}
	if retention <= 0 {
		retention = DefaultRetention
	}
	lk.mu.Lock()
	if lk.released {
		lk.mu.Unlock()
		return ErrNotHeld
	}
	lk.released = true
	lost := lk.lost
	lk.mu.Unlock()
	if !lost && lk.tel != nil {
		l.telemetry.holdEnded(lk, holdReleased)
	}

	until := l.dog.remove(lk)
	if lost {
		// The lock may still be ours in the store for its margin, but we no
		// longer vouch for it: release it without a record.
		_ = l.store.Release(ctx, lk.skey, lk.token)
		l.wakeLocal(lk.skey)
		return ErrNotHeld
	}
	write := func(ctx context.Context) error {
		return r.ReleaseRecording(ctx, lk.skey, lk.token, record, retention)
	}
	err = write(ctx)
	l.wakeLocal(lk.skey)
	if err != nil && !errors.Is(err, ErrNotHeld) {
		l.undo(ctx, until, lk.skey, undoReleaseRecording, func(ctx context.Context) error {
			err := write(ctx)
			if err == nil {
				l.wakeLocal(lk.skey)
			}
			return err
		})
		return unavailable("release", ctxErr(ctx), err)
	}
	return err
}

// ErrNoDurability is returned by Locker.RecordsDurable when the store
// cannot tell whether its records survive a restart (it does not implement
// Durability).
var ErrNoDurability = errors.New("reqlock: the store cannot tell whether its records survive a restart (it does not implement store.Durability)")

// RecordsDurable asks l's store whether its records survive a restart of
// the store itself (see Durability), so that a caller that replays records
// can warn at start-up when they will not. ErrNoDurability when the store
// cannot tell.
func (l *Locker) RecordsDurable(ctx context.Context) (durable bool, detail string, err error) {
	d, ok := l.store.(store.Durability)
	if !ok {
		return false, "", ErrNoDurability
	}
	return d.RecordsDurable(ctx)
}
