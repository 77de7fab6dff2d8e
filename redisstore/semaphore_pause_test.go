package redisstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/internal/safety"
	"github.com/reqlock/reqlock/redisstore"
)

// permitWorkerEnv makes the test binary a process that holds one permit
// (see permitWorker).
const permitWorkerEnv = "REQLOCK_PERMIT_WORKER"

// permitWorker takes a permit of the key (spec: "addr key ttl-ms limit"),
// says "held <fence>", and waits until its Lost fires: then it says
// "lost <shared clock>", releases, says "release <error>", and exits.
func permitWorker(spec string) int {
	var addr, key string
	var ttlMs, limit int
	if _, err := fmt.Sscan(spec, &addr, &key, &ttlMs, &limit); err != nil {
		fmt.Fprintln(os.Stderr, "bad worker spec:", err)
		return 2
	}
	c := redis.NewClient(redistest.ClientOptions(addr))
	defer c.Close()
	sem := core.NewLocker(redisstore.New(c), core.WithLogger(quietLog),
		core.WithTTL(time.Duration(ttlMs)*time.Millisecond)).Semaphore(limit)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lk, err := sem.Obtain(ctx, key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "obtain:", err)
		return 1
	}
	fmt.Printf("held %d\n", lk.Fence())
	select {
	case <-lk.Lost():
		fmt.Printf("lost %d\n", safety.Now())
	case <-ctx.Done():
		fmt.Println("never lost")
	}
	fmt.Printf("release %v\n", lk.Release(context.Background()))
	return 0
}

// A permit holder paused (SIGSTOP) past its lease costs one lease: its
// place is then taken by a waiter, the key stays at N holders, and once
// the holder runs again it finds its permit lost, and its release takes
// nothing of anyone else's.
func TestSemaphorePausedHolder(t *testing.T) {
	srv := redistest.Start(t)
	const ttl, limit = 400 * time.Millisecond, 2
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s paused %d %d", permitWorkerEnv, srv.Addr, ttl.Milliseconds(), limit))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(prefix string) string {
		t.Helper()
		select {
		case line := <-lines:
			if !strings.HasPrefix(line, prefix+" ") {
				t.Fatalf("the holder said %q, want %q …", line, prefix)
			}
			return strings.TrimPrefix(line, prefix+" ")
		case <-time.After(10 * time.Second):
			t.Fatalf("the holder said nothing for 10s; want %q …", prefix)
		}
		return ""
	}
	var stale uint64
	fmt.Sscan(next("held"), &stale)

	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sem := core.NewLocker(redisstore.New(srv.Client(t)), core.WithLogger(quietLog), core.WithTTL(10*time.Second)).Semaphore(limit)
	first, err := sem.TryObtain(ctx, "paused")
	if err != nil {
		t.Fatalf("the second of two permits: %v", err)
	}
	defer first.Release(ctx)
	if _, err := sem.TryObtain(ctx, "paused"); !errors.Is(err, core.ErrNotObtained) {
		t.Fatalf("a third permit while the paused holder's lease runs: %v, want ErrNotObtained", err)
	} else if d, ok := core.HolderTTL(err); !ok || d > ttl {
		t.Fatalf("the full key says a permit frees in %v (known: %v); the paused holder's lease is %v", d, ok, ttl)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	second, err := sem.Obtain(wctx, "paused")
	if err != nil {
		t.Fatalf("waiting for the paused holder's place: %v", err)
	}
	defer second.Release(ctx)
	if second.Fence() <= stale || first.Fence() <= stale {
		t.Fatalf("fences %d and %d, not above the paused holder's %d", first.Fence(), second.Fence(), stale)
	}

	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	next("lost")
	if rel := next("release"); !strings.Contains(rel, core.ErrNotHeld.Error()) {
		t.Fatalf("the paused holder's release: %s, want ErrNotHeld", rel)
	}
	hs, err := sem.Inspect(ctx, "paused")
	if err != nil || len(hs) != limit {
		t.Fatalf("after the paused holder ran again: %d holders (%v), want the %d that hold", len(hs), err, limit)
	}
	for _, lk := range []*core.Lock{first, second} {
		if _, err := lk.TTL(ctx); err != nil {
			t.Fatalf("a live permit after the paused holder's release: %v", err)
		}
	}
	if lk, err := sem.TryObtain(ctx, "paused"); !errors.Is(err, core.ErrNotObtained) {
		if lk != nil {
			_ = lk.Release(ctx)
		}
		t.Fatalf("a third permit after the paused holder ran again: %v, want ErrNotObtained", err)
	}
}
