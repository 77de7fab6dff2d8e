package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A record-asking acquire (four keys) whose caller gave up lands late:
// after someone else ran the work and recorded it, it answers with the
// record and takes nothing; with no record yet, the cancel marker still
// stops it.
func TestCancelledRecordAcquireLandingLate(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		name := "no record"
		if recorded {
			name = "after the record"
		}
		t.Run(name, func(t *testing.T) {
			px := redistest.StartProxied(t)
			l := newLocker(redisstore.New(px.Via), core.WithTTL(10*time.Second))
			other := newLocker(redisstore.New(px.Direct), core.WithTTL(10*time.Second))
			ctx := ctxT(t, 20*time.Second)
			skey, _ := l.StoreKey("k")
			// Load the script, so that the held EVALSHA runs when it lands.
			warm, rec, err := l.TryObtainOrRecord(ctx, "warm-up")
			if err != nil || warm == nil {
				t.Fatalf("warm-up: %q %v", rec, err)
			}
			_ = warm.Release(ctx)

			land := px.HoldNext(t)
			before := px.Answered.Load()
			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			if _, _, err := l.TryObtainOrRecord(short, "k"); !errors.Is(err, core.ErrUnavailable) {
				t.Fatalf("held acquire: %v, want ErrUnavailable", err)
			}
			lockertest.WaitFor(t, "the clean-up to run", func() bool { return px.Answered.Load() > before })
			if recorded {
				recordOnce(t, ctx, other, "k")
			}
			land()
			redistest.Settle(t, px.Direct)
			if n := px.Direct.Exists(ctx, skey).Val(); n != 0 {
				t.Fatalf("the late record-asking acquire took the lock for nobody, for %v", px.Direct.PTTL(ctx, skey).Val())
			}
			if recorded {
				if got := px.Direct.Get(ctx, skey+":record").Val(); got != "vdone" {
					t.Fatalf("record after the late acquire landed: %q", got)
				}
				return
			}
			lk, rec, err := other.TryObtainOrRecord(ctx, "k")
			if err != nil || lk == nil || rec != nil {
				t.Fatalf("next caller: %v %q %v; want the lock", lk, rec, err)
			}
			_ = lk.Release(ctx)
		})
	}
}
