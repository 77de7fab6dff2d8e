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
