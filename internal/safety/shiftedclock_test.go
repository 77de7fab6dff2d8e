package safety

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/internal/redistest"
)

// shiftedClock returns a clock of the test's own at rate for redis-servers
// (redistest.Clock: an LD_PRELOAD shim built with gcc), once the shim has
// shown, once per test binary, that Redis expires keys by it. It skips the
// test when gcc is missing or the shim does not work here.
func shiftedClock(t *testing.T, rate float64) *redistest.Clock {
	t.Helper()
	clockProbe.once.Do(func() { clockProbe.skip = probeClockShim(t) })
	if clockProbe.skip != "" {
		t.Skip(clockProbe.skip)
	}
	c, err := redistest.NewClock(t, rate)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var clockProbe struct {
	once sync.Once
	skip string
}

// probeClockShim returns why the shim cannot run the clock scenarios, or "".
// Both ways a clock goes wrong must reach key expiry: at 4× a key set for
// 2s is gone after 0.7s; after a jump of 10s a key set for 5s is gone at
// once, and TIME reads 10s ahead.
func probeClockShim(t *testing.T) string {
	fast, err := redistest.NewClock(t, 4)
	if errors.Is(err, redistest.ErrNoCompiler) {
		return err.Error()
	}
	if err != nil {
		return fmt.Sprintf("clock shim: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	srv := redistest.StartEnv(t, fast.Env())
	defer srv.Kill()
	c := redis.NewClient(redistest.ClientOptions(srv.Addr))
	defer c.Close()
	if err := c.Set(ctx, "probe", "1", 2*time.Second).Err(); err != nil {
		return fmt.Sprintf("redis-server on the clock shim: SET: %v", err)
	}
	time.Sleep(700 * time.Millisecond)
	if n, err := c.Exists(ctx, "probe").Result(); err != nil || n != 0 {
		return fmt.Sprintf("redis-server on the clock shim at 4× does not expire keys by it "+
			"(a key set for 2s still there after 0.7s: EXISTS %d, %v)", n, err)
	}

	jumping, err := redistest.NewClock(t, 1)
	if err != nil {
		return fmt.Sprintf("clock shim: %v", err)
	}
	srv2 := redistest.StartEnv(t, jumping.Env())
	defer srv2.Kill()
	c2 := redis.NewClient(redistest.ClientOptions(srv2.Addr))
	defer c2.Close()
	if err := c2.Set(ctx, "probe", "1", 5*time.Second).Err(); err != nil {
		return fmt.Sprintf("redis-server on the clock shim: SET: %v", err)
	}
	if err := jumping.Jump(10 * time.Second); err != nil {
		return fmt.Sprintf("clock shim: jump: %v", err)
	}
	if n, err := c2.Exists(ctx, "probe").Result(); err != nil || n != 0 {
		return fmt.Sprintf("redis-server on the clock shim does not expire keys by its wall clock "+
			"(a key set for 5s still there right after a jump of 10s: EXISTS %d, %v)", n, err)
	}
	serverNow, err := c2.Time(ctx).Result()
	if ahead := time.Until(serverNow); err != nil || ahead < 9*time.Second || ahead > 11*time.Second {
		return fmt.Sprintf("redis-server on the clock shim: TIME is %v ahead after a jump of 10s, not 10s (%v)", ahead, err)
	}
	return ""
}
