package core_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// serverCycles is how many cycles of each kind reportServerTime runs.
const serverCycles = 2000

// reportServerTime runs serverCycles floor cycles, then as many reqlock
// cycles, on c's server, and reports the server's time per cycle for
// each, from INFO commandstats, and their ratio: what reqlock costs Redis,
// apart from the network and the client, against a hand-written lock.
// Only the commands the client sends count (a script's own calls are
// inside its time): SET, EVALSHA and EVAL for the floor, EVALSHA and EVAL
// for reqlock.
func reportServerTime(b *testing.B, c *redis.Client, floor, reqlock func()) {
	b.Helper()
	measure := func(cycle func(), sent ...string) float64 {
		if err := c.ConfigResetStat(context.Background()).Err(); err != nil {
			b.Fatal(err)
		}
		for range serverCycles {
			cycle()
		}
		return commandMicros(b, c, sent...) / serverCycles
	}
	f := measure(floor, "set", "evalsha", "eval")
	r := measure(reqlock, "evalsha", "eval")
	b.ReportMetric(f, "floor-server-µs")
	b.ReportMetric(r, "reqlock-server-µs")
	b.ReportMetric(r/f, "server-reqlock/floor")
}

// commandMicros is the server time INFO commandstats counts for the named
// commands since the last CONFIG RESETSTAT, in microseconds.
func commandMicros(tb testing.TB, c *redis.Client, names ...string) float64 {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !slices.Contains(names, strings.TrimPrefix(name, "cmdstat_")) {
			continue
		}
		for _, field := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(field, "usec="); ok {
				n, _ := strconv.ParseFloat(v, 64)
				total += n
			}
		}
	}
	return total
}
