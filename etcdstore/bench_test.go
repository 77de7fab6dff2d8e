package etcdstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/etcdstore"
	"github.com/reqlock/reqlock/internal/benchratio"
	"github.com/reqlock/reqlock/internal/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// The benchmarks run etcd's own concurrency.Mutex beside the store, in the
// same run, on the same member, and report ratios to it.

func benchLocker(b *testing.B, cli *clientv3.Client) *core.Locker {
	return core.NewLocker(etcdstore.New(cli), core.WithLogger(quietLog()))
}

// Uncontended: Obtain and Release of a free key, beside Mutex's Lock and
// Unlock with its session made beforehand. Bar: reqlock/mutex ≤ 1.0.
func BenchmarkUncontendedCycle(b *testing.B) {
	c := etcdtest.Start(b)
	cli := c.Client(b)
	ctx := context.Background()
	l := benchLocker(b, cli)
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	mu := concurrency.NewMutex(sess, "/bench/mutex")
	b.ReportAllocs()
	benchratio.Ratios(b,
		benchratio.Cycle{Name: "mutex", Run: func() {
			if err := mu.Lock(ctx); err != nil {
				b.Fatal(err)
			}
			if err := mu.Unlock(ctx); err != nil {
				b.Fatal(err)
			}
		}},
		benchratio.Cycle{Name: "reqlock", Run: func() {
			lk, err := l.Obtain(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			if err := lk.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}},
	)
}

// Writes per acquisition: etcd's committed proposals per cycle, uncontended
// and with 8 Lockers taking turns, for both.
func BenchmarkWritesPerAcquisition(b *testing.B) {
	c := etcdtest.Start(b)
	m := c.Members[0]
	cli := c.Client(b)
	ctx := context.Background()
	count := func(n int, run func()) float64 {
		before := m.Metric(b, "etcd_server_proposals_committed_total")
		run()
		return (m.Metric(b, "etcd_server_proposals_committed_total") - before) / float64(n)
	}
	const n = 200
	l := benchLocker(b, cli)
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	mu := concurrency.NewMutex(sess, "/bench/mutex")
	for b.Loop() {
		ours := count(n, func() {
			for range n {
				lk, err := l.Obtain(ctx, "bench")
				if err != nil {
					b.Fatal(err)
				}
				_ = lk.Release(ctx)
			}
		})
		theirs := count(n, func() {
			for range n {
				_ = mu.Lock(ctx)
				_ = mu.Unlock(ctx)
			}
		})
		b.ReportMetric(ours, "reqlock-writes/acq")
		b.ReportMetric(theirs, "mutex-writes/acq")
		var got atomic.Int64
		ours8 := count(n, func() { handOffs(b, c, n, &got, nil) })
		theirs8 := count(n, func() { mutexHandOffs(b, c, n, nil) })
		b.ReportMetric(ours8, "reqlock-8-writes/acq")
		b.ReportMetric(theirs8, "mutex-8-writes/acq")
	}
}

// Hand-off: 8 Lockers (each its own client, as 8 instances) take turns on
// one key; the gap is from the moment a holder starts its release to the
// moment the next holder's Obtain returns. Bar: p50 ≤ Mutex's.
func BenchmarkHandOffGap(b *testing.B) {
	c := etcdtest.Start(b)
	const n = 100 // hand-offs of each per iteration
	var ours, theirs []time.Duration
	var got atomic.Int64
	for b.Loop() {
		handOffs(b, c, n, &got, &ours)
		mutexHandOffs(b, c, n, &theirs)
	}
	p := func(ds []time.Duration, q float64) float64 {
		slices.Sort(ds)
		return float64(ds[int(q*float64(len(ds)-1))])
	}
	b.ReportMetric(p(ours, 0.5), "reqlock-p50-ns")
	b.ReportMetric(p(ours, 0.99), "reqlock-p99-ns")
	b.ReportMetric(p(theirs, 0.5), "mutex-p50-ns")
	b.ReportMetric(p(theirs, 0.99), "mutex-p99-ns")
	b.ReportMetric(p(ours, 0.5)/p(theirs, 0.5), "p50-reqlock/mutex")
	b.ReportMetric(p(ours, 0.99)/p(theirs, 0.99), "p99-reqlock/mutex")
}

// gapClock measures hand-off gaps: a holder marks the start of its
// release, the next holder the return of its acquire.
type gapClock struct {
	mu       sync.Mutex
	released time.Time
	gaps     *[]time.Duration
}

func (g *gapClock) acquired() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gaps != nil && !g.released.IsZero() {
		*g.gaps = append(*g.gaps, time.Since(g.released))
	}
	g.released = time.Time{}
}

func (g *gapClock) releasing() {
	g.mu.Lock()
	g.released = time.Now()
	g.mu.Unlock()
}

// handOffs runs n acquisitions spread over 8 Lockers contending for one key.
func handOffs(b *testing.B, c *etcdtest.Cluster, n int, got *atomic.Int64, gaps *[]time.Duration) {
	ctx := context.Background()
	clock := &gapClock{gaps: gaps}
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range 8 {
		l := benchLocker(b, c.Client(b))
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				lk, err := l.Obtain(ctx, "handoff")
				if err != nil {
					b.Error(err)
					return
				}
				clock.acquired()
				got.Add(1)
				clock.releasing()
				_ = lk.Release(ctx)
			}
		})
	}
	wg.Wait()
}

// mutexHandOffs is handOffs with etcd's Mutex, one session per client.
func mutexHandOffs(b *testing.B, c *etcdtest.Cluster, n int, gaps *[]time.Duration) {
	ctx := context.Background()
	clock := &gapClock{gaps: gaps}
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for range 8 {
		sess, err := concurrency.NewSession(c.Client(b), concurrency.WithTTL(10))
		if err != nil {
			b.Fatal(err)
		}
		defer sess.Close()
		mu := concurrency.NewMutex(sess, "/bench/handoff")
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := mu.Lock(ctx); err != nil {
					b.Error(err)
					return
				}
				clock.acquired()
				clock.releasing()
				_ = mu.Unlock(ctx)
			}
		})
	}
	wg.Wait()
}

// Keep-alives: lease renewals etcd's leader sees per second while 1 and
// while 1,000 locks are held by one Locker (TTL 3s), and while 1,000
// Mutexes are held, each on a session of its own as Mutex needs. Bar: the
// store's rate does not grow with the locks held.
func BenchmarkKeepAlivesHeldLocks(b *testing.B) {
	c := etcdtest.Start(b)
	m := c.Members[0]
	cli := c.Client(b)
	ctx := context.Background()
	const hold = 4 * time.Second
	rate := func(run func()) float64 {
		before := m.Metric(b, "etcd_debugging_lease_renewed_total")
		start := time.Now()
		run()
		return (m.Metric(b, "etcd_debugging_lease_renewed_total") - before) / time.Since(start).Seconds()
	}
	holding := func(n int) func() {
		return func() {
			l := core.NewLocker(etcdstore.New(cli), core.WithTTL(3*time.Second), core.WithLogger(quietLog()))
			var locks []*core.Lock
			for i := range n {
				lk, err := l.Obtain(ctx, fmt.Sprint("held-", i))
				if err != nil {
					b.Fatal(err)
				}
				locks = append(locks, lk)
			}
			time.Sleep(hold)
			for _, lk := range locks {
				if isLost(lk) {
					b.Fatal("a held lock was lost")
				}
				_ = lk.Release(ctx)
			}
		}
	}
	for b.Loop() {
		one := rate(holding(1))
		thousand := rate(holding(1000))
		mutexes := rate(func() {
			var sessions []*concurrency.Session
			for i := range 1000 {
				s, err := concurrency.NewSession(cli, concurrency.WithTTL(3))
				if err != nil {
					b.Fatal(err)
				}
				if err := concurrency.NewMutex(s, fmt.Sprint("/bench/held-", i)).Lock(ctx); err != nil {
					b.Fatal(err)
				}
				sessions = append(sessions, s)
			}
			time.Sleep(hold)
			for _, s := range sessions {
				_ = s.Close()
			}
		})
		b.ReportMetric(one, "reqlock-1-renewals/s")
		b.ReportMetric(thousand, "reqlock-1000-renewals/s")
		b.ReportMetric(mutexes, "mutex-1000-renewals/s")
		b.ReportMetric(thousand/max(one, 1e-9), "reqlock-1000/1")
	}
}

func isLost(lk *core.Lock) bool {
	select {
	case <-lk.Lost():
		return true
	default:
		return false
	}
}
