package store

import (
	"context"
	"time"
)

// RunMarker is implemented by stores that keep records and remember that a
// run of a recorded key started, so that the next holder of the key learns
// when the run before it ended neither with a record nor cleanly: it lost
// its lock (a crash, a pause past its lease, a store that lost the lock)
// and what it did is unknown (in doubt).
//
// A mark lives beside the key's record, under the same {hash tag}, until
// its holder records (ReleaseRecording drops it, or it goes before the
// record does), clears it, or its retention ends.
type RunMarker interface {
	// MarkRun is called by the holder of key (token) before its run. It
	// reports whether a mark of an earlier run is there: that run is in
	// doubt. With again, this run goes ahead all the same and its own
	// mark, kept for retention, replaces the old one; without, the old
	// mark stays as it is, so that the next holder is told too. With no
	// earlier mark it leaves one, kept for retention. A mark of token's
	// own (a retried call) is no doubt. ErrNotHeld when token does not
	// hold key; then nothing changes.
	MarkRun(ctx context.Context, key, token string, retention time.Duration, again bool) (inDoubt bool, err error)
	// UnmarkRun clears the mark while token holds key: the run ended
	// cleanly, without a record (its error left nothing behind).
	// ErrNotHeld when token does not hold key; then the mark stays.
	UnmarkRun(ctx context.Context, key, token string) error
	// ForgetRun clears key's mark whoever holds the key: an operator's
	// word that the run in doubt was settled by hand.
	ForgetRun(ctx context.Context, key string) error
}

// RunMark is what an acquire asks of MarkRun when it marks the run in its
// own round trip (Lease.Mark): the mark's retention (0: no mark asked
// for), and again.
type RunMark struct {
	Retention time.Duration
	Again     bool
}

// AcquireMarker is implemented by RunMarkers whose acquire that looks for
// the key's record (AcquireOrRecord, and AcquireQueued with withRecord)
// can also mark the run, in the same round trip: a first run then costs
// one round trip less. A Locker sets Lease.Mark only on such a store, and
// calls MarkRun itself on others.
//
// With Lease.Mark set, an acquire that takes the lock does what MarkRun
// (l.Key, l.Token, Mark.Retention, Mark.Again) would do right after it, in
// the same atomic step, and answers in Grant.InDoubt. One difference:
// with Again over another run's mark, that mark stays, renewed for
// Retention, instead of being replaced by the token's own: the run goes
// ahead under it, and if it ends neither with a record nor cleanly the
// next holder is told, as MarkRun's own mark would tell it. So that a lock
// given back before its run started (an acquire cancelled, a caller gone
// before it could run) can take back the mark it made: the token's own
// mark is one it made on a key that had none.
//
// An acquire that finds the record, finds the key taken, or takes nothing
// for any other reason marks nothing. Cancel, and a Waker's Leave, also
// drop a mark that is the token's own (Leave: HandedOverToken(waiter)'s):
// an acquire that landed after its caller gave up leaves no mark behind.
type AcquireMarker interface {
	RunMarker
	// MarksOnAcquire reports whether the store honours Lease.Mark: a
	// store may do so only in some of its setups.
	MarksOnAcquire() bool
}
