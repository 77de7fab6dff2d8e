package store

import (
	"context"
	"time"
)

// Recorder is implemented by stores that keep records: the holder of a lock
// writes the result of the work the lock guarded, in the same round trip as
// its release and only if its token still holds the lock; a later acquire of
// the same key finds the record instead of the lock.
type Recorder interface {
	// AcquireOrRecord is Acquire that, when the key has a record, returns it
	// (and a zero Grant) instead of taking the lock. A record is never nil,
	// even an empty one: nil says there is none.
	AcquireOrRecord(ctx context.Context, l Lease) (Grant, []byte, error)
	// ReleaseRecording writes record for the key, kept for retention, and
	// releases the lock, only if token still holds it; ErrNotHeld when it
	// does not, and then nothing is written.
	ReleaseRecording(ctx context.Context, key, token string, record []byte, retention time.Duration) error
}

// Durability is implemented by stores that can tell whether their records
// survive a restart of the store itself (a Redis without AOF or RDB
// snapshots loses them). A middleware that replays records asks once at
// start-up and warns when they will not.
type Durability interface {
	// RecordsDurable reports whether records survive a restart; detail
	// says what the answer rests on. An error means the store could not
	// tell (its configuration cannot be read, say).
	RecordsDurable(ctx context.Context) (durable bool, detail string, err error)
}
