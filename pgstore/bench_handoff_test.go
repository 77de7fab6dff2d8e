package pgstore_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// counter counts the statements a pool sends (pgx's query tracer).
type counter struct{ n atomic.Int64 }

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// contention is one run of n contenders taking one key in turn.
type contention struct {
	gaps  []time.Duration // from a release to the next acquire by another contender that waited
	total int
}

// contend runs n contenders until count acquisitions: each takes the key
// (take returns once it has it), holds it for hold, gives it back and
// thinks for think, so that every hand-off goes to another contender.
func contend(n, count int, hold, think time.Duration, take func(i int) func()) contention {
	type event struct {
		asked, acquired, released time.Time
		by                        int
	}
	var mu sync.Mutex
	var events []event
	var c contention
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for {
				mu.Lock()
				done := c.total >= count
				mu.Unlock()
				if done {
					return
				}
				asked := time.Now()
				release := take(i)
				if release == nil {
					return
				}
				got := time.Now()
				time.Sleep(hold)
				rel := time.Now()
				release()
				mu.Lock()
				events = append(events, event{asked, got, rel, i})
				c.total++
				mu.Unlock()
				time.Sleep(think)
			}
		})
	}
	wg.Wait()
	slices.SortFunc(events, func(a, b event) int { return a.acquired.Compare(b.acquired) })
	for i := 1; i < len(events); i++ {
		if events[i].by != events[i-1].by && events[i].asked.Before(events[i-1].released) {
			c.gaps = append(c.gaps, events[i].acquired.Sub(events[i-1].released))
		}
	}
	return c
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(int(p*float64(len(s))), len(s)-1)]
}

// BenchmarkHandOff is the gap from a release to the next holder's
// acquire with 8 Lockers (8 instances, each its own pool) on one key,
// woken by LISTEN/NOTIFY, against 8 loops polling the floor's statement
// every millisecond, in the same run; and one NOTIFY's hop to an idle
// listener, the least a wake-up can cost. Bars: p50 ≤ 1.5× the pollers',
// p99 ≤ the pollers', statements per acquisition ≤ a quarter of theirs.
func BenchmarkHandOff(b *testing.B) {
	const n, count = 8, 400
	hold, think := 2*time.Millisecond, 2*time.Millisecond
	srv := pgtest.Shared(b)
	conn := srv.NewDatabase(b)
	ctx := context.Background()
	setup := pgtest.OpenPool(b, conn)
	if err := pgstore.New(setup).Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := setup.Exec(ctx, floorTableSQL); err != nil {
		b.Fatal(err)
	}
	counted := func(c *counter) func(*pgxpool.Config) {
		return func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = c; cfg.MaxConns = 2 }
	}
	var woken, polled contention
	var lockerStmts, pollerStmts counter
	for b.Loop() {
		lockers := make([]*core.Locker, n)
		pools := make([]*pgxpool.Pool, 0, 2*n)
		for i := range lockers {
			p := pgtest.OpenPool(b, conn, counted(&lockerStmts))
			pools = append(pools, p)
			lockers[i] = core.NewLocker(pgstore.New(p), core.WithLogger(quiet))
		}
		woken = contend(n, count, hold, think, func(i int) func() {
			lk, err := lockers[i].Obtain(ctx, "hot")
			if err != nil {
				b.Error(err)
				return nil
			}
			return func() { _ = lk.Release(ctx) }
		})
		pollers := make([]*pgxpool.Pool, n)
		for i := range pollers {
			pollers[i] = pgtest.OpenPool(b, conn, counted(&pollerStmts))
		}
		pools = append(pools, pollers...)
		polled = contend(n, count, hold, think, func(i int) func() {
			token := string(rune('a' + i))
			for {
				ok, err := floorTake(ctx, pollers[i], "hot", token)
				if err != nil {
					b.Error(err)
					return nil
				}
				if ok {
					return func() { _ = floorFree(ctx, pollers[i], "hot", token) }
				}
				time.Sleep(time.Millisecond)
			}
		})
		// Each round's connections go with it: the server's
		// max_connections bounds the pools open at once.
		for _, p := range pools {
			p.Close()
		}
	}
	hop := notifyHop(b, conn)
	p50, p99 := percentile(woken.gaps, 0.5), percentile(woken.gaps, 0.99)
	pp50, pp99 := percentile(polled.gaps, 0.5), percentile(polled.gaps, 0.99)
	ls := float64(lockerStmts.n.Load()) / float64(max(woken.total, 1))
	ps := float64(pollerStmts.n.Load()) / float64(max(polled.total, 1))
	b.ReportMetric(float64(p50.Microseconds()), "gap-p50-µs")
	b.ReportMetric(float64(p99.Microseconds()), "gap-p99-µs")
	b.ReportMetric(float64(pp50.Microseconds()), "poll-p50-µs")
	b.ReportMetric(float64(pp99.Microseconds()), "poll-p99-µs")
	b.ReportMetric(float64(p50)/float64(max(pp50, 1)), "p50/poll-p50")
	b.ReportMetric(float64(p99)/float64(max(pp99, 1)), "p99/poll-p99")
	b.ReportMetric(ls, "stmts/acq")
	b.ReportMetric(ps, "poll-stmts/acq")
	b.ReportMetric(ls/ps, "stmts/poll-stmts")
	b.ReportMetric(float64(hop.Microseconds()), "notify-hop-µs")
	b.ReportMetric(float64(p50)/float64(max(hop, 1)), "p50/hop")
}

// notifyHop is the median time from sending a NOTIFY to an idle listener
// on another connection hearing it.
func notifyHop(b *testing.B, conn string) time.Duration {
	ctx := context.Background()
	listener, err := pgx.Connect(ctx, conn)
	if err != nil {
		b.Fatal(err)
	}
	defer listener.Close(ctx)
	sender, err := pgx.Connect(ctx, conn)
	if err != nil {
		b.Fatal(err)
	}
	defer sender.Close(ctx)
	if _, err := listener.Exec(ctx, "LISTEN bench_hop"); err != nil {
		b.Fatal(err)
	}
	var hops []time.Duration
	for range 200 {
		time.Sleep(time.Millisecond) // idle, as a listener between releases
		heard := make(chan time.Time, 1)
		go func() {
			_, err := listener.WaitForNotification(ctx)
			if err != nil {
				b.Error(err)
			}
			heard <- time.Now()
		}()
		start := time.Now()
		if _, err := sender.Exec(ctx, "SELECT pg_notify('bench_hop', 'x')"); err != nil {
			b.Fatal(err)
		}
		hops = append(hops, (<-heard).Sub(start))
	}
	return percentile(hops, 0.5)
}
