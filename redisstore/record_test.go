package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// recordKey is where redisstore.Store keeps the record of the user key key.
func recordKey(t *testing.T, l *core.Locker, key string) string {
	t.Helper()
	skey, err := l.StoreKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return skey + ":record"
}

// recordOnce has Once run for key and record "done".
func recordOnce(t *testing.T, ctx context.Context, l *core.Locker, key string) {
	t.Helper()
	out, err := l.Once(ctx, key, time.Hour, func(context.Context) ([]byte, error) { return []byte("done"), nil })
	if err != nil || string(out.Value) != "done" {
		t.Fatalf("first Once: %q, %v", out.Value, err)
	}
}

// Every call that asks for the record finds it, whether it goes out with
// the record's key last (four keys) or in line with the flag (five keys),
// and takes nothing; the calls that do not ask take the lock. Also after
// SCRIPT FLUSH, when the joined source goes out as EVAL.
func TestRecordAskedByEveryRecordCall(t *testing.T) {
	for _, flush := range []bool{false, true} {
		name := "cached"
		if flush {
			name = "after SCRIPT FLUSH"
		}
		t.Run(name, func(t *testing.T) {
			c := redistest.Start(t).Client(t)
			l := newLocker(redisstore.New(c), core.WithTTL(2*time.Second))
			ctx := ctxT(t, 20*time.Second)
			recordOnce(t, ctx, l, "k")
			skey, _ := l.StoreKey("k")
			taken := &store.NotObtainedError{Remaining: time.Second}

			asks := []struct {
				name string
				call func() (*core.Lock, []byte, error)
			}{
				{"TryObtainOrRecord", func() (*core.Lock, []byte, error) { return l.TryObtainOrRecord(ctx, "k") }},
				{"ObtainOrRecord", func() (*core.Lock, []byte, error) { return l.ObtainOrRecord(ctx, "k") }},
				// In line at once: the first attempt is the waiter's, with the flag.
				{"ObtainOrRecordAfter", func() (*core.Lock, []byte, error) { return l.ObtainOrRecordAfter(ctx, "k", taken) }},
			}
			for _, a := range asks {
				if flush {
					if err := c.ScriptFlush(ctx).Err(); err != nil {
						t.Fatal(err)
					}
				}
				lk, rec, err := a.call()
				if err != nil || lk != nil || string(rec) != "vdone" {
					t.Errorf("%s with a record: lock %v, record %q, %v; want the record", a.name, lk, rec, err)
				}
				if lk != nil {
					_ = lk.Release(ctx)
				}
				if n := c.Exists(ctx, skey).Val(); n != 0 {
					t.Errorf("%s took the lock of a key with a record", a.name)
				}
			}
			if flush {
				if err := c.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			out, err := l.Once(ctx, "k", time.Hour, func(context.Context) ([]byte, error) {
				t.Error("Once ran fn again for a key with a record")
				return nil, nil
			})
			if err != nil || string(out.Value) != "done" {
				t.Errorf("Once with a record: %q, %v; want the recorded value", out.Value, err)
			}

			// The calls that do not ask take the lock.
			plain := []struct {
				name string
				call func() (*core.Lock, error)
			}{
				{"TryObtain", func() (*core.Lock, error) { return l.TryObtain(ctx, "k") }},
				{"Obtain", func() (*core.Lock, error) { return l.Obtain(ctx, "k") }},
				{"ObtainAfter", func() (*core.Lock, error) { return l.ObtainAfter(ctx, "k", taken) }},
			}
			for _, p := range plain {
				if flush {
					if err := c.ScriptFlush(ctx).Err(); err != nil {
						t.Fatal(err)
					}
				}
				lk, err := p.call()
				if err != nil {
					t.Errorf("%s of a key with a record: %v; want the lock", p.name, err)
					continue
				}
				if err := lk.Release(ctx); err != nil {
					t.Errorf("%s: release: %v", p.name, err)
				}
			}
		})
	}
}

// A waiter in line that asks for the record gets it when the holder it
// waited for records its result: its polls carry the flag (five keys).
func TestWaiterInLineGetsTheRecordWritten(t *testing.T) {
	c := redistest.Start(t).Client(t)
	l := newLocker(redisstore.New(c), core.WithTTL(2*time.Second))
	ctx := ctxT(t, 20*time.Second)
	holder, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		lk  *core.Lock
		rec []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		lk, rec, err := l.ObtainOrRecord(ctx, "k")
		got <- result{lk, rec, err}
	}()
	qkey := func() string { s, _ := l.StoreKey("k"); return s + ":q" }()
	lockertest.WaitFor(t, "the waiter to stand in line", func() bool { return c.LLen(ctx, qkey).Val() == 1 })
	if err := holder.ReleaseRecording(ctx, []byte("paid"), time.Hour); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || r.lk != nil || string(r.rec) != "paid" {
		if r.lk != nil {
			_ = r.lk.Release(ctx)
		}
		t.Fatalf("waiter in line after the holder recorded: lock %v, record %q, %v; want the record", r.lk, r.rec, r.err)
	}
}

// The same on a Cluster: the record's key shares the lock's slot, and both
// layouts go to the key's master, also after the scripts were flushed.
func TestRecordAskedOnCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	l := newLocker(redisstore.New(cc), core.WithTTL(2*time.Second))
	ctx := ctxT(t, 30*time.Second)
	keys := []string{"a", "b", "c", "d", "e", "f"}
	for _, k := range keys {
		recordOnce(t, ctx, l, k)
	}
	if err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.ScriptFlush(ctx).Err()
	}); err != nil {
		t.Fatal(err)
	}
	taken := &store.NotObtainedError{Remaining: time.Second}
	for _, k := range keys {
		if lk, rec, err := l.TryObtainOrRecord(ctx, k); err != nil || lk != nil || string(rec) != "vdone" {
			t.Errorf("%s: TryObtainOrRecord: %v %q %v; want the record", k, lk, rec, err)
		}
		if lk, rec, err := l.ObtainOrRecordAfter(ctx, k, taken); err != nil || lk != nil || string(rec) != "vdone" {
			t.Errorf("%s: ObtainOrRecordAfter: %v %q %v; want the record", k, lk, rec, err)
		}
	}
}

// With WithReplicaAcks an acquire goes through the acked path
// (evalThenWait), and what the script says without taking anything still
// reaches the caller: a key whose work was done answers with its record,
// and Once replays it; a key that is held reports its holder's lease.
func TestReplicaAcksReturnTheRecordAndTheLease(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := ctxT(t, 20*time.Second)
	// The record is written without acks: no replica here would ack it.
	recordOnce(t, ctx, newLocker(redisstore.New(c)), "k")

	acked := newLocker(redisstore.New(c).WithReplicaAcks(1, 50*time.Millisecond), core.WithTTL(time.Second))
	lk, rec, err := acked.TryObtainOrRecord(ctx, "k")
	if lk != nil {
		_ = lk.Release(ctx)
	}
	if err != nil || string(rec) != "vdone" {
		t.Errorf("TryObtainOrRecord with replica acks, on a key with a record: record %q, %v; want the record", rec, err)
	}

	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	out, err := acked.Once(short, "k", time.Hour, func(context.Context) ([]byte, error) {
		return nil, errors.New("fn ran again")
	})
	if err != nil || string(out.Value) != "done" {
		t.Errorf("Once with replica acks, on a key with a record: %q, %v; want the recorded value", out.Value, err)
	}

	holder, err := newLocker(redisstore.New(c), core.WithTTL(10*time.Second)).TryObtain(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Release(ctx) }()
	_, err = acked.TryObtain(ctx, "held")
	var taken *store.NotObtainedError
	if !errors.As(err, &taken) || taken.Remaining < 5*time.Second || taken.Remaining > 10*time.Second {
		t.Errorf("TryObtain with replica acks on a held key: %v; want not obtained with the holder's lease left", err)
	}
}
