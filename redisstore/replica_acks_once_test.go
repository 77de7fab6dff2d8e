package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// With WithReplicaAcks, the record Once relies on is waited for too: when
// no replica confirms it, Once says so (ErrNotReplicated) instead of
// reporting a success that a failover would undo.
func TestOnceRecordIsReplicaAcked(t *testing.T) {
	sn := redistest.StartSentinel(t)
	master, replica := sn.Data[0], sn.Data[1]
	mc := master.Client(t)
	l := newLocker(redisstore.New(mc).WithReplicaAcks(1, 2*time.Second), core.WithTTL(time.Second))
	ctx := ctxT(t, 30*time.Second)

	rc := replica.Client(t)
	// The acquire is acked by the replica. While fn runs, the replication
	// link goes down (modelled by detaching the replica, which keeps the
	// acked lock), so only the record's write goes unreplicated.
	out, err := l.Once(ctx, "pay-1", time.Hour, func(c context.Context) ([]byte, error) {
		if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
			t.Fatal(err)
		}
		return []byte("charged"), nil
	})
	if !errors.Is(err, redisstore.ErrNotReplicated) || string(out.Value) != "charged" {
		t.Fatalf("Once whose record no replica confirmed: %q, %v; want the value and ErrNotReplicated", out.Value, err)
	}
	// Another key is refused too: nothing takes a lock no replica confirms.
	if _, err := l.TryObtain(ctx, "other"); err == nil {
		t.Fatal("an acquire was acked with no replica connected")
	}
}
