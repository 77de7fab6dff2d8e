package lockertest

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

// A record with no bytes ("the work is done", nothing more to say) is a
// record: once written, a record-asking acquire gets it back and takes
// nothing, whether it was written as nil or as an empty slice. A store that
// handed a nil record back with a zero Grant and no error would be read as
// a grant: the caller would get a Lock of fence 0 on a key nobody holds in
// the store, and a second caller would take the key beside it.
func emptyRecordIsARecord(t *testing.T, stores []Store) {
	eachRecordingStore(t, stores, func(t *testing.T, st core.Store) {
		for rname, record := range map[string][]byte{"nil": nil, "empty": {}} {
			t.Run(rname, func(t *testing.T) {
				ctx := Context(t, 10*time.Second)
				key := "k-" + rname // a key of its own, as a fresh store had
				l := NewLocker(st)
				lk, err := l.Obtain(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if err := lk.ReleaseRecording(ctx, record, time.Minute); err != nil {
					t.Fatal(err)
				}
				got, rec, err := l.TryObtainOrRecord(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if got == nil {
					if rec == nil {
						t.Fatal("neither a lock nor a record")
					}
					return
				}
				defer func() { _ = got.Release(ctx) }()
				other, err := NewLocker(st).TryObtain(ctx, key)
				if err == nil {
					defer func() { _ = other.Release(ctx) }()
					t.Fatalf("the record-asking acquire returned a Lock (fence %d) while another caller took the key too (fence %d)",
						got.Fence(), other.Fence())
				}
				t.Fatalf("the record-asking acquire took the lock (fence %d) though a record was written", got.Fence())
			})
		}
	})
}
