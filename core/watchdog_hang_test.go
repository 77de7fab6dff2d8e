package core_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
)

// pauseOwnerOnExtend stops (SIGSTOP) the Cluster master that owns a given
// lock key as soon as a renewal of that key starts: its renewal then hangs
// on a real, stopped server.
type pauseOwnerOnExtend struct {
	core.Store
	key   string
	owner *redistest.Server
	armed atomic.Bool
}

func (s *pauseOwnerOnExtend) Extend(ctx context.Context, ls []core.Lease) []core.Renewal {
	for _, l := range ls {
		if l.Key == s.key && s.armed.CompareAndSwap(true, false) {
			s.owner.Pause()
			break
		}
	}
	return s.Store.Extend(ctx, ls)
}

// One master of a Cluster stops while a renewal waits on it. A short lock
// of the same Locker on a healthy master must never be held by someone else
// while its holder still believes it holds it: it is renewed, or it is
// declared lost by its own deadline, whatever the hung renewal is doing.
func TestWatchdogClusterMasterStoppedMidRenewal(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	ctx := ctxT(t, 20*time.Second)
	const long, short = 3 * time.Second, 300 * time.Millisecond
	probe := newLocker(core.NewRedisStore(cc))

	// Two keys on different masters.
	var slowKey, fastKey string
	var slowOwner *redistest.Server
	for i := 0; fastKey == ""; i++ {
		k := fmt.Sprintf("user:%d", i)
		skey, _ := probe.StoreKey(k)
		_, owner := cl.KeyOwner(t, skey)
		switch {
		case slowKey == "":
			slowKey, slowOwner = k, owner
		case owner != slowOwner:
			fastKey = k
		}
	}
	slowSkey, _ := probe.StoreKey(slowKey)
	st := &pauseOwnerOnExtend{Store: core.NewRedisStore(cc), key: slowSkey, owner: slowOwner}
	l := newLocker(st, core.WithTTL(short))

	slow, err := l.TryObtain(ctx, slowKey)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := slow.Refresh(ctx, long); err != nil { // its next renewal: about t0+1s
		t.Fatal(err)
	}
	st.armed.Store(true)
	time.Sleep(time.Until(t0.Add(970 * time.Millisecond)))
	fast, err := l.TryObtain(ctx, fastKey) // added while the slow renewal hangs
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		slowOwner.Resume()
		cl.WaitHealthy(t)
		_ = fast.Release(ctx)
		_ = slow.Release(ctx)
	}()

	// Another Locker tries for fastKey for two seconds, many leases of it.
	other := newLocker(core.NewRedisStore(cc), core.WithTTL(short))
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		next, err := other.TryObtain(ctx, fastKey)
		if err == nil {
			select {
			case <-fast.Lost():
			default:
				t.Fatal("another holder has the fast lock and its holder still believes it holds it")
			}
			_ = next.Release(ctx)
			return
		}
		if !errors.Is(err, core.ErrNotObtained) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Better still: the healthy master kept renewing it.
	select {
	case <-fast.Lost():
		t.Fatal("the fast lock was lost, yet nobody else could take it")
	default:
	}
}

// A Refresh whose extend runs in Redis, but whose reply comes back only
// after the lock was declared lost (renewal replies are late too): the
// Refresh fails, and what it extended is released. A lost lock stays lost.
func TestRefreshAfterLostExtendsNothing(t *testing.T) {
	px := startProxied(t)
	const ttl = 300 * time.Millisecond
	l := newLocker(core.NewRedisStore(px.via), core.WithTTL(ttl))
	ctx := ctxT(t, 10*time.Second)
	lk, err := l.TryObtain(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Refresh(ctx, ttl); err != nil { // loads the script: no NOSCRIPT round trip later
		t.Fatal(err)
	}
	px.proxy.Delay(faultproxy.Downstream, 2*ttl) // commands run; replies come late
	if err := lk.Refresh(ctx, 10*time.Second); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("Refresh answered after the lock was lost: %v, want ErrNotHeld", err)
	}
	select {
	case <-lk.Lost():
	default:
		t.Fatal("Refresh failed but Lost did not fire")
	}
	px.proxy.Heal()
	skey, _ := l.StoreKey("k")
	waitFor(t, "the key Refresh extended to be released", func() bool { return px.direct.Exists(ctx, skey).Val() == 0 })
	if err := lk.Refresh(ctx, 10*time.Second); !errors.Is(err, core.ErrNotHeld) {
		t.Fatalf("second Refresh: %v, want ErrNotHeld", err)
	}
	if n := px.direct.Exists(ctx, skey).Val(); n != 0 {
		t.Fatal("a Refresh after Lost put the key back")
	}
}

// Fences are exact integers past 2^53, where Lua's numbers are not.
func TestRedisFenceExactPast2To53(t *testing.T) {
	c := redistest.Start(t).Client(t)
	st := core.NewRedisStore(c)
	ctx := ctxT(t, 10*time.Second)
	key := "reqlock:{big-fence}"
	const high = 1<<53 + 1 // the first integer a double cannot hold
	if err := c.Set(ctx, key+":fence", uint64(high), 0).Err(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []uint64{high + 1, high + 2} {
		g, err := st.Acquire(ctx, core.Lease{Key: key, Token: fmt.Sprint("t", i), TTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if g.Fence != want {
			t.Fatalf("fence %d, want %d", g.Fence, want)
		}
		if err := st.Release(ctx, key, fmt.Sprint("t", i)); err != nil {
			t.Fatal(err)
		}
	}
	// A counter with no successor in 19 digits refuses, and takes nothing.
	if err := c.Set(ctx, key+":fence", "9999999999999999999", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Acquire(ctx, core.Lease{Key: key, Token: "last", TTL: time.Second}); err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Fatalf("acquire past the last fence: %v, want an error", err)
	}
	if n := c.Exists(ctx, key).Val(); n != 0 {
		t.Fatal("a refused acquire kept the lock")
	}
}

// A client that ignores context deadlines is named once, at construction.
func TestNewRedisStoreWarnsWithoutContextTimeout(t *testing.T) {
	var logged strings.Builder
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	defer slog.SetDefault(prev)

	addr := redistest.Start(t).Addr
	good := redis.NewClient(redistest.ClientOptions(addr))
	defer good.Close()
	core.NewRedisStore(good)
	if logged.Len() != 0 {
		t.Fatalf("warned about a client with ContextTimeoutEnabled: %s", logged.String())
	}
	opts := redistest.ClientOptions(addr)
	opts.ContextTimeoutEnabled = false
	bad := redis.NewClient(opts)
	defer bad.Close()
	core.NewRedisStore(bad)
	core.NewRedisStore(bad)
	if n := strings.Count(logged.String(), "level=WARN"); n != 1 {
		t.Fatalf("%d warnings for one client without ContextTimeoutEnabled, want 1:\n%s", n, logged.String())
	}
}
