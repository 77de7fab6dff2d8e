package core_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/internal/safety"
	"github.com/reqlock/reqlock/redisstore"
)

// handOffWorkerEnv makes the test binary a worker process of
// BenchmarkHandOffProcesses: "addr count holdµs thinkµs durationms".
const handOffWorkerEnv = "REQLOCK_HANDOFF_WORKER"

// handOffWorker takes the key in a loop, as one instance of a service, and
// prints one line per acquisition: when it asked, got it and released it,
// on the machine's monotonic clock (shared by every process on Linux).
func handOffWorker(spec string) int {
	var addr string
	var count, holdUs, thinkUs, durMs int
	if _, err := fmt.Sscan(spec, &addr, &count, &holdUs, &thinkUs, &durMs); err != nil {
		fmt.Fprintln(os.Stderr, "bad worker spec:", err)
		return 2
	}
	c := redis.NewClient(redistest.ClientOptions(addr))
	defer c.Close()
	l := core.NewLocker(redisstore.New(c), core.WithLogger(quiet))
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(durMs)*time.Millisecond)
	defer cancel()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for range count {
		asked := safety.Now()
		lk, err := l.Obtain(ctx, "hot")
		if err != nil {
			return 0 // the run's time is up
		}
		got := safety.Now()
		time.Sleep(time.Duration(holdUs) * time.Microsecond)
		released := safety.Now()
		_ = lk.Release(context.Background())
		fmt.Fprintln(out, asked, got, released)
		time.Sleep(time.Duration(thinkUs) * time.Microsecond)
	}
	return 0
}

// BenchmarkHandOffProcesses is BenchmarkHandOff with each instance a
// separate OS process of this test binary: 2 and 8 of them, each taking
// the key for 3s (2ms held, 1ms pause between, so that another always
// waits). Reported:
// the hand-off gap between processes against PING, each process's share,
// and the longest wait against the mean.
func BenchmarkHandOffProcesses(b *testing.B) {
	if !safety.SharedClock {
		b.Skip("needs a monotonic clock shared by processes (Linux)")
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("processes=%d", n), func(b *testing.B) {
			srv := redistest.Start(b)
			for range b.N {
				ping := pingRTT(b, srv.Client(b), 0)
				type event struct {
					asked, got, released int64
					by                   int
				}
				var events []event
				outs := make([]*bytes.Buffer, n)
				cmds := make([]*exec.Cmd, n)
				for i := range n {
					outs[i] = new(bytes.Buffer)
					cmds[i] = exec.Command(exe, "-test.run=^$")
					cmds[i].Env = append(os.Environ(), fmt.Sprintf("%s=%s 1000000 2000 1000 3000", handOffWorkerEnv, srv.Addr))
					cmds[i].Stdout, cmds[i].Stderr = outs[i], os.Stderr
					if err := cmds[i].Start(); err != nil {
						b.Fatal(err)
					}
				}
				for i, cmd := range cmds {
					if err := cmd.Wait(); err != nil {
						b.Fatalf("worker %d: %v", i, err)
					}
					for _, line := range strings.Split(strings.TrimSpace(outs[i].String()), "\n") {
						var e event
						if _, err := fmt.Sscan(line, &e.asked, &e.got, &e.released); err == nil {
							e.by = i
							events = append(events, e)
						}
					}
				}
				slices.SortFunc(events, func(a, b event) int { return int(a.got - b.got) })
				var gaps, waits []time.Duration
				share := make([]int, n)
				for i, e := range events {
					share[e.by]++
					waits = append(waits, time.Duration(e.got-e.asked))
					// A hand-off: the lock passed to another process that was
					// already waiting when it was released.
					if i > 0 && events[i-1].by != e.by && e.asked < events[i-1].released {
						gaps = append(gaps, time.Duration(e.got-events[i-1].released))
					}
				}
				p50, p99 := percentile(gaps, 0.5), percentile(gaps, 0.99)
				b.ReportMetric(float64(len(events)), "acquisitions")
				b.ReportMetric(float64(ping.Microseconds()), "ping-µs")
				b.ReportMetric(float64(p50.Microseconds()), "gap-p50-µs")
				b.ReportMetric(float64(p99.Microseconds()), "gap-p99-µs")
				b.ReportMetric(float64(p50)/float64(ping), "p50/ping")
				b.ReportMetric(spread(share, len(events)), "share-spread")
				b.ReportMetric(float64(slices.Max(waits))/float64(max(mean(waits), 1)), "maxwait/mean")
			}
		})
	}
}
