package core_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// pollingOnly hides every optional interface of a store, wake-ups and the
// line among them: the Locker then waits by its backoff alone, as it did
// before waiters were woken. It is the baseline the hand-off is measured
// against.
type pollingOnly struct{ core.Store }

// contention is one run of n Lockers, each with a client of its own (an
// instance), taking one key in turn, holding it for hold.
type contention struct {
	gaps  []time.Duration // from each release to the next acquire by another Locker
	waits []time.Duration // from each Obtain to its lock
	share []int           // acquisitions per Locker
	total int
}

// contend runs until count acquisitions or until dur has passed. After each
// release a Locker pauses for think before it asks again, so that every
// hand-off goes to another Locker, as between two instances that each
// serve a stream of requests.
func contend(tb testing.TB, addr string, n, count int, hold, think, dur time.Duration, polling bool) contention {
	tb.Helper()
	type event struct {
		asked, acquired, released time.Time
		by                        int
	}
	var mu sync.Mutex
	var events []event
	c := contention{share: make([]int, n)}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	for i := range n {
		client := redis.NewClient(redistest.ClientOptions(addr))
		defer client.Close()
		var st core.Store = redisstore.New(client)
		if polling {
			st = pollingOnly{st}
		}
		l := core.NewLocker(st, core.WithLogger(quiet))
		wg.Go(func() {
			for {
				mu.Lock()
				done := c.total >= count
				mu.Unlock()
				if done {
					return
				}
				start := time.Now()
				lk, err := l.Obtain(ctx, "hot")
				if err != nil {
					return // the run's time is up
				}
				got := time.Now()
				time.Sleep(hold)
				rel := time.Now()
				_ = lk.Release(context.Background())
				time.Sleep(think)
				mu.Lock()
				events = append(events, event{start, got, rel, i})
				c.waits = append(c.waits, got.Sub(start))
				c.share[i]++
				c.total++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.SortFunc(events, func(a, b event) int { return a.acquired.Compare(b.acquired) })
	// A hand-off is a lock passing to another instance that was already
	// waiting for it; a Locker taking its own key again is none.
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

// pingRTT is the median loopback PING round trip, one after another, or
// each after idle of quiet (a server and a client that slept wake slower).
func pingRTT(tb testing.TB, c *redis.Client, idle time.Duration) time.Duration {
	var rtts []time.Duration
	for range 500 {
		time.Sleep(idle)
		t := time.Now()
		if err := c.Ping(context.Background()).Err(); err != nil {
			tb.Fatal(err)
		}
		rtts = append(rtts, time.Since(t))
	}
	return percentile(rtts, 0.5)
}

// messageHop is the median time from a PUBLISH, sent after idle, to a
// subscriber on another connection holding the message: the least a
// wake-up by message costs, and so the least a hand-off between instances
// costs, whatever carries it.
func messageHop(tb testing.TB, addr string, idle time.Duration) time.Duration {
	ctx := context.Background()
	pub := redis.NewClient(redistest.ClientOptions(addr))
	defer pub.Close()
	sub := redis.NewClient(redistest.ClientOptions(addr))
	defer sub.Close()
	ps := sub.Subscribe(ctx, "reqlock-bench:hop")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		tb.Fatal(err)
	}
	var hops []time.Duration
	for range 300 {
		time.Sleep(idle)
		sent := time.Now()
		if err := pub.Publish(ctx, "reqlock-bench:hop", "x").Err(); err != nil {
			tb.Fatal(err)
		}
		if _, err := ps.ReceiveMessage(ctx); err != nil {
			tb.Fatal(err)
		}
		hops = append(hops, time.Since(sent))
	}
	return percentile(hops, 0.5)
}

// commandsSent is how many commands clients sent Redis so far, from INFO
// commandstats: script calls once each (the calls a script makes inside are
// not the client's), plus SUBSCRIBE, UNSUBSCRIBE and PUBLISH.
func commandsSent(tb testing.TB, c *redis.Client) int {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	total := 0
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch name {
		case "cmdstat_evalsha", "cmdstat_eval", "cmdstat_subscribe", "cmdstat_unsubscribe":
		default:
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		n, _ := strconv.Atoi(calls)
		total += n
	}
	return total
}

// spread is how far the busiest or idlest Locker's share of acquisitions
// is from an equal share, as a fraction of it.
func spread(share []int, total int) float64 {
	fair := float64(total) / float64(len(share))
	worst := 0.0
	for _, s := range share {
		worst = max(worst, abs(float64(s)-fair)/fair)
	}
	return worst
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(max(len(ds), 1))
}

// BenchmarkHandOff measures waiting across instances: n Lockers with a
// client each on one key, holding it 2ms at a time and pausing 5ms after
// each release. Beside it, in the same
// run, the loopback PING round trip, one message's hop (PUBLISH to a
// subscriber, after 2ms idle: the least any wake-up by message costs), and
// the polling baseline (the same Lockers with wake-ups and the line switched
// off). PING is measured back to back and after 2ms idle: on a virtual
// machine whose idle cores sleep, each hop of a hand-off between processes
// that were waiting costs a wake-up, which a PING loop never pays. Reported: the hand-off
// gap (release to next acquire) median and p99 against PING and against
// polling, commands clients sent per acquisition (INFO commandstats), how
// far the most and least served Locker is from an equal share, and the
// longest wait against the mean wait.
func BenchmarkHandOff(b *testing.B) {
	for _, n := range []int{8, 64} {
		b.Run(fmt.Sprintf("lockers=%d", n), func(b *testing.B) {
			srv := redistest.Start(b)
			probe := srv.Client(b)
			count := 50 * n
			for range b.N {
				const hold, think = 2 * time.Millisecond, 5 * time.Millisecond
				ping := pingRTT(b, probe, 0)
				idlePing := pingRTT(b, probe, hold)
				hop := messageHop(b, srv.Addr, hold)
				before := commandsSent(b, probe)
				woken := contend(b, srv.Addr, n, count, hold, think, 20*time.Second, false)
				cmds := commandsSent(b, probe) - before
				before = commandsSent(b, probe)
				polled := contend(b, srv.Addr, n, count, hold, think, 10*time.Second, true)
				polledCmds := commandsSent(b, probe) - before

				p50, p99 := percentile(woken.gaps, 0.5), percentile(woken.gaps, 0.99)
				b.ReportMetric(float64(ping.Microseconds()), "ping-µs")
				b.ReportMetric(float64(idlePing.Microseconds()), "idle-ping-µs")
				b.ReportMetric(float64(p50)/float64(idlePing), "p50/idle-ping")
				b.ReportMetric(float64(hop.Microseconds()), "hop-µs")
				b.ReportMetric(float64(p50)/float64(hop), "p50/hop")
				b.ReportMetric(float64(p50.Microseconds()), "gap-p50-µs")
				b.ReportMetric(float64(p99.Microseconds()), "gap-p99-µs")
				b.ReportMetric(float64(p50)/float64(ping), "p50/ping")
				b.ReportMetric(float64(p99)/float64(ping), "p99/ping")
				b.ReportMetric(float64(percentile(polled.gaps, 0.5).Microseconds()), "polling-p50-µs")
				b.ReportMetric(float64(percentile(polled.gaps, 0.5))/float64(max(p50, 1)), "polling/woken")
				b.ReportMetric(spread(polled.share, polled.total), "polling-share-spread")
				b.ReportMetric(float64(polledCmds)/float64(max(polled.total, 1)), "polling-cmds/acq")
				b.ReportMetric(float64(cmds)/float64(max(woken.total, 1)), "cmds/acq")
				b.ReportMetric(spread(woken.share, woken.total), "share-spread")
				b.ReportMetric(float64(slices.Max(woken.waits))/float64(max(mean(woken.waits), 1)), "maxwait/mean")
			}
		})
	}
}
