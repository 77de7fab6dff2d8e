package memorystore

import "time"

// DefaultRecordBytes bounds the records a Store keeps.
const DefaultRecordBytes = 64 << 20

// memoryRecords keeps a Store's records, bounded by retention and by
// size. Records leave in the order they were written: each expires at its
// retention, and when the bytes go over the limit the oldest go first. The
// caller holds the store's mutex.
type memoryRecords struct {
	byKey map[string]memoryRecord
	order []recordRef // in the order written; stale refs are skipped
	head  int         // order[:head] is gone
	bytes int
	limit int
	seq   uint64
}

type memoryRecord struct {
	value   []byte
	expires time.Time
	seq     uint64 // which write this is, to tell a live ref from a stale one
}

type recordRef struct {
	key string
	seq uint64
}

func (r *memoryRecords) get(key string, now time.Time) ([]byte, bool) {
	rec, ok := r.byKey[key]
	if !ok || !now.Before(rec.expires) {
		return nil, false
	}
	// A copy, never nil: a caller that changes the bytes it was handed
	// must not change what the next caller finds, as over the network.
	return append([]byte{}, rec.value...), true
}

func (r *memoryRecords) put(key string, value []byte, expires, now time.Time) {
	if r.byKey == nil {
		r.byKey = make(map[string]memoryRecord)
	}
	r.drop(key)
	r.seq++
	// Never nil, even for an empty record: a nil record is how an acquire
	// says there is none (see store.Recorder).
	r.byKey[key] = memoryRecord{value: append(make([]byte, 0, len(value)), value...), expires: expires, seq: r.seq}
	r.order = append(r.order, recordRef{key, r.seq})
	r.bytes += len(key) + len(value)
	r.evict(now)
}

func (r *memoryRecords) drop(key string) {
	if old, ok := r.byKey[key]; ok {
		r.bytes -= len(key) + len(old.value)
		delete(r.byKey, key)
	}
}

// evict drops, oldest first, the records that expired and those over the
// byte limit.
func (r *memoryRecords) evict(now time.Time) {
	for r.head < len(r.order) {
		ref := r.order[r.head]
		rec, ok := r.byKey[ref.key]
		switch {
		case !ok || rec.seq != ref.seq: // rewritten or dropped since
		case r.bytes > r.limit || !now.Before(rec.expires):
			r.drop(ref.key)
		default:
			r.compact()
			return
		}
		r.order[r.head] = recordRef{}
		r.head++
	}
	r.compact()
}

// compact reclaims the front of order once half of it is gone.
func (r *memoryRecords) compact() {
	if r.head > 0 && r.head >= len(r.order)/2 {
		r.order = append(r.order[:0], r.order[r.head:]...)
		r.head = 0
	}
}
