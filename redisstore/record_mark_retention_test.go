package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A run that recorded settled its mark, whatever the two retentions: a
// record kept shorter than the mark (Lock.MarkRun and Lock.ReleaseRecording
// each take their own) must not leave the mark behind it, to tell the next
// holder, once the record is gone, of a doubt the record settled. The
// other stores delete the mark with the record.
func TestRecordShorterThanMarkLeavesNoDoubt(t *testing.T) {
	c := redistest.Start(t).Client(t)
	l := newLocker(redisstore.New(c), core.WithDoubtPolicy(core.RefuseInDoubt))
	ctx := ctxT(t, 20*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lk.MarkRun(ctx, time.Hour, core.RefuseInDoubt); err != nil {
		t.Fatal(err)
	}
	if err := lk.ReleaseRecording(ctx, []byte("vpaid"), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	skey, _ := l.StoreKey("k")
	lockertest.WaitFor(t, "the record's retention to end", func() bool {
		return c.Exists(ctx, skey+":record").Val() == 0
	})
	out, err := l.Once(ctx, "k", time.Hour, func(context.Context) ([]byte, error) { return []byte("paid"), nil })
	if err != nil || out.InDoubt {
		t.Fatalf("Once after a run that recorded, its record gone: %+v, %v; want a plain run", out, err)
	}
}
