package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/pgstore"
)

// A sweep deletes at most limit expired records, but must keep up with
// records written faster than one limit a period (with the defaults, 500
// a minute: about 8 idempotent requests a second), or the table is not
// "bounded by what is live". Here the sweep is scaled down (5 every
// 20ms) and records, each kept 1ms, are written at twice that rate for a
// second: nothing is live, and the expired backlog must stay about a
// period's writes.
func TestSweepKeepsUpWithRecords(t *testing.T) {
	const every, limit, perPeriod = 20 * time.Millisecond, 5, 2 * 5
	s, pool := open(t, pgstore.WithSweep(every, limit))
	ctx := context.Background()
	n := 0
	tick := time.NewTicker(every)
	defer tick.Stop()
	for start := time.Now(); time.Since(start) < time.Second; <-tick.C {
		for range perPeriod {
			key := fmt.Sprintf("reqlock:{rec-%d}", n)
			n++
			if _, err := s.Acquire(ctx, store.Lease{Key: key, Token: "t", TTL: time.Minute}); err != nil {
				t.Fatal(err)
			}
			if err := s.ReleaseRecording(ctx, key, "t", []byte("r"), time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
	}
	var expired int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM reqlock_records WHERE expires < clock_timestamp()").Scan(&expired); err != nil {
		t.Fatal(err)
	}
	// A sweep that keeps up leaves a period's writes or so behind.
	if expired > 2*perPeriod {
		t.Fatalf("%d expired records (of %d written at %d every %v) left by a sweep of %d every %v",
			expired, n, perPeriod, every, limit, every)
	}
}
