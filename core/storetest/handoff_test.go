package storetest_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// store.Granter: "A lock handed to waiter is held under
// HandedOverToken(waiter) for HandOffTimeout", and core.Locker relies on
// it: a waiter told of a hand-off with a fresh fence runs under the lock
// without a round trip, trusting it until its last refused attempt plus
// HandOffTimeout (core/wait.go, handedOver). contract/hand-off-lasts
// checks it; the store below breaks it, and TestShortHandOffGranterLetsTwoHold
// shows what that costs.

// shortHandOff is a store written outside this repository: the Redis store,
// embedded (so it is a Granter), whose hand-offs run for d instead of
// HandOffTimeout.
type shortHandOff struct {
	*redisstore.Store
	c *redis.Client
	d time.Duration
}

// shorten makes a hand-off of key, if the key is handed off, run out
// within d; one script, so nothing lands between the read and the write.
var shorten = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, 1) == '~' and redis.call('PTTL', KEYS[1]) > tonumber(ARGV[1]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 1`)

func (s *shortHandOff) shorten(ctx context.Context, key string) {
	_ = shorten.Run(ctx, s.c, []string{key}, s.d.Milliseconds()).Err()
}

func (s *shortHandOff) Release(ctx context.Context, key, token string) error {
	err := s.Store.Release(ctx, key, token)
	s.shorten(ctx, key)
	return err
}

func (s *shortHandOff) Leave(ctx context.Context, key, waiter string) error {
	err := s.Store.Leave(ctx, key, waiter)
	s.shorten(ctx, key)
	return err
}

func (s *shortHandOff) Cancel(ctx context.Context, l store.Lease) error {
	err := s.Store.Cancel(ctx, l)
	s.shorten(ctx, l.Key)
	return err
}

const shortHandOffFor = 30 * time.Millisecond

// handOffCases are Redis stores run through contract/hand-off-lasts in a
// child process, and whether the promise must fail for them.
var handOffCases = []struct {
	name  string
	fails bool
}{
	{"whole", false},           // the Redis store itself
	{"short", true},            // hand-offs of shortHandOffFor, the harness none the wiser: the measurement catches it
	{"short-bound-told", true}, // the same, with a harness that says so in HandOffBound
}

// The suite must fail a Granter whose hand-off is shorter than the one
// core trusts, and pass the Redis store's.
func TestSuiteFailsGranterWithShortHandOff(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for _, hc := range handOffCases {
		t.Run(hc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHandOffStore$/^contract$/^hand-off-lasts$", "-test.v", "-test.count=1", "-test.timeout=5m")
			// brokenEnv keeps goleak out of the child, as for TestBrokenStore.
			cmd.Env = append(os.Environ(), brokenEnv+"=hand-off-"+hc.name)
			b, err := cmd.CombinedOutput()
			out := string(b)
			failed := strings.Contains(out, "--- FAIL: TestHandOffStore/contract/hand-off-lasts (")
			var exit *exec.ExitError
			switch {
			case !strings.Contains(out, "=== RUN   TestHandOffStore/contract/hand-off-lasts"):
				t.Fatalf("the child run did not check the promise (%v):\n%s", err, out)
			case hc.fails && (!failed || !errors.As(err, &exit)):
				t.Fatalf("the suite passed a Granter whose hand-off runs for %v, not store.HandOffTimeout (%v) (%v):\n%s",
					shortHandOffFor, store.HandOffTimeout, err, out)
			case !hc.fails && (failed || err != nil):
				t.Fatalf("the suite fails the Redis store's hand-off (%v):\n%s", err, out)
			}
		})
	}
}

// TestHandOffStore is the child run.
func TestHandOffStore(t *testing.T) {
	name, ok := strings.CutPrefix(os.Getenv(brokenEnv), "hand-off-")
	if !ok {
		t.Skip("run as a child of TestSuiteFailsGranterWithShortHandOff")
	}
	srv := redistest.Start(t)
	h := storetest.Harness{New: func(t testing.TB) core.Store { return redisstore.New(srv.Client(t)) }}
	if name != "whole" {
		h.New = func(t testing.TB) core.Store {
			c := srv.Client(t)
			return &shortHandOff{Store: redisstore.New(c), c: c, d: shortHandOffFor}
		}
	}
	if name == "short-bound-told" {
		h.HandOffBound = shortHandOffFor
	}
	storetest.Run(t, h)
}

// What a short hand-off costs: on the store above, a waiter handed the
// lock runs under it while the hand-off has run out in the store and
// another Locker takes the key. Two holders at once is shown when the
// other Locker's grant comes while the waiter still trusts its lock; a
// round in which the waiter learned of the loss first, or claimed the key
// with a round trip (a loaded machine), shows nothing and is run again.
func TestShortHandOffGranterLetsTwoHold(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	s := &shortHandOff{Store: redisstore.New(c), c: c, d: shortHandOffFor}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const rounds = 5
	for range rounds {
		if twoHeld(ctx, t, s) {
			return
		}
	}
	t.Skipf("none of %d rounds could show it: each time the waiter learned of the loss, or claimed the key, first", rounds)
}

// twoHeld runs one round: true when two Lockers held the key at once.
func twoHeld(ctx context.Context, t *testing.T, s core.Store) bool {
	t.Helper()
	key := rand.Text()
	a := core.NewLocker(s, core.WithTTL(5*time.Second))
	b := core.NewLocker(s, core.WithTTL(5*time.Second), core.WithRetry(backoff.Constant(time.Minute)))
	other := core.NewLocker(s, core.WithTTL(5*time.Second))
	held, err := a.TryObtain(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *core.Lock, 1)
	go func() {
		lk, err := b.Obtain(ctx, key)
		if err != nil {
			t.Error(err)
		}
		got <- lk
	}()
	for {
		hd, err := a.Inspect(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if hd.Waiting == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waiter := <-got
	if waiter == nil {
		t.FailNow()
	}
	defer func() { _ = waiter.Release(context.Background()) }()
	// The other Locker tries until the store gives it the key, for as long
	// as the waiter may trust a hand-off.
	for deadline := time.Now().Add(store.HandOffTimeout); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		select {
		case <-waiter.Lost():
			return false // told first: no overlap
		default:
		}
		lk, err := other.TryObtain(ctx, key)
		if errors.Is(err, core.ErrNotObtained) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = lk.Release(context.Background()) }()
		select {
		case <-waiter.Lost():
			return false
		default:
			t.Logf("two holders of one key: the waiter (fence %d) still trusts its lock while another Locker took the key (fence %d)",
				waiter.Fence(), lk.Fence())
			return true
		}
	}
	return false // the waiter claimed the key with a round trip
}
