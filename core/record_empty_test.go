package core_test

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// A record with no bytes ("the work is done", nothing more to say) is a
// record: once written, a record-asking acquire gets it back and takes
// nothing, whether it was written as nil or as an empty slice. A store that
// handed a nil record back with a zero Grant and no error would be read as
// a grant: the caller would get a Lock of fence 0 on a key nobody holds in
// the store, and a second caller would take the key beside it.
func TestEmptyRecordIsARecord(t *testing.T) {
	stores := map[string]func(t *testing.T) core.Store{
		"memory": func(*testing.T) core.Store { return memorystore.New() },
		"redis":  func(t *testing.T) core.Store { return redisstore.New(redistest.Start(t).Client(t)) },
	}
	for name, open := range stores {
		for rname, record := range map[string][]byte{"nil": nil, "empty": {}} {
			t.Run(name+"/"+rname, func(t *testing.T) {
				ctx := ctxT(t, 10*time.Second)
				st := open(t)
				l := newLocker(st)
				lk, err := l.Obtain(ctx, "k")
				if err != nil {
					t.Fatal(err)
				}
				if err := lk.ReleaseRecording(ctx, record, time.Minute); err != nil {
					t.Fatal(err)
				}
				got, rec, err := l.TryObtainOrRecord(ctx, "k")
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
				other, err := newLocker(st).TryObtain(ctx, "k")
				if err == nil {
					defer func() { _ = other.Release(ctx) }()
					t.Fatalf("the record-asking acquire returned a Lock (fence %d) while another caller took the key too (fence %d)",
						got.Fence(), other.Fence())
				}
				t.Fatalf("the record-asking acquire took the lock (fence %d) though a record was written", got.Fence())
			})
		}
	}
}
