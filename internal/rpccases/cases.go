package rpccases

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/httplock"
)

// Cases is the table every RPC adapter runs.
var Cases = []Case{
	{Name: "duplicate is Aborted with RetryInfo", Run: duplicate},
	{Name: "Wait serves in turn", Run: waitInTurn},
	{Name: "Wait past MaxWait is Aborted", Run: waitPastMaxWait},
	{Name: "a full queue is ResourceExhausted", Run: fullQueue},
	{Name: "a full key is ResourceExhausted with RetryInfo", Run: fullKey},
	{Name: "client gone while waiting never runs", Run: clientGone},
	{Name: "handler panic releases the lock", Run: handlerPanic},
	{Name: "Replay returns the first response", Run: replay},
	{Name: "Replay refuses the key with another request", Run: replayMismatch},
	{Name: "Replay in flight, Reject mode", Run: replayInFlight},
	{Name: "Replay in flight, Wait mode", Run: replayAfterWait},
	{Name: "Replay records no error", Run: replayNoError},
	{Name: "a stream holds its lock and is not replayed", Run: streamLocked},
	{Name: "store down fail-closed is Unavailable", Needs: canFail, Run: storeDownClosed},
	{Name: "store down fail-open runs unlocked", Needs: canFail, Run: storeDownOpen},
	{Name: "hostile keys lock apart and never reach the store", Run: hostileKeys},
	{Name: "bad keys are InvalidArgument", Run: badKeys},
	{Name: "a misconfigured key is Internal", Run: misconfigured},
	{Name: "Join of user and header", Run: join},
	{Name: "telemetry names the method", Run: telemetry},
	{Name: "the framework's server span carries the outcome", Run: spans},
}

func canFail(be Backend) bool { return be.Down != nil }

// config is the cases' usual Config on be: keyed by header, Reject mode.
func config(be Backend) Config {
	return Config{Locker: be.Locker, Key: KeyHeader, Logger: Quiet, MaxWait: 20 * time.Second}
}

// key is a call keyed k by header.
func key(k, text string) Call { return Call{Keys: []string{k}, Text: text} }

// held starts a call that the handler holds at g, and returns its result
// channel once it is in the handler.
func held(t *testing.T, c Client, g *Gate, call Call) <-chan Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() { done <- c.Unary(t.Context(), call) }()
	g.WaitEntered(t)
	return done
}

func duplicate(t *testing.T, a Adapter, be Backend) {
	g := NewGate()
	c := a.Serve(t, config(be), Handlers{Unary: func(ctx context.Context, _ string) (string, error) {
		return "ok", g.Pass(ctx)
	}})
	first := held(t, c, g, key("pay-1", "a"))
	wantRetry(t, "a duplicate", c.Unary(t.Context(), key("pay-1", "a")), Aborted)
	g.Release()
	want(t, "the first call", <-first, OK)
	want(t, "after the first ended", c.Unary(t.Context(), key("pay-1", "a")), OK)
	if most, total := g.Counts(); most != 1 || total != 2 {
		t.Fatalf("the handler ran %d times, %d at most at once; want 2, one at a time", total, most)
	}
}

func waitInTurn(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Mode = httplock.Wait
	var mu sync.Mutex
	running, most, total := 0, 0, 0
	c := a.Serve(t, cfg, Handlers{Unary: func(context.Context, string) (string, error) {
		mu.Lock()
		running++
		total++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(10 * time.Millisecond) // long enough for the others to queue
		mu.Lock()
		running--
		mu.Unlock()
		return "ok", nil
	}})
	const n = 8
	results := make(chan Result, n)
	for range n {
		go func() { results <- c.Unary(t.Context(), key("same", "a")) }()
	}
	for range n {
		want(t, "a waiting call", <-results, OK)
	}
	if most != 1 || total != n {
		t.Fatalf("%d calls ran, at most %d at once; want %d, one at a time", total, most, n)
	}
}

func waitPastMaxWait(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Mode, cfg.MaxWait = httplock.Wait, 200*time.Millisecond
	g := NewGate()
	c := a.Serve(t, cfg, Handlers{Unary: func(ctx context.Context, _ string) (string, error) {
		return "ok", g.Pass(ctx)
	}})
	first := held(t, c, g, key("k", "a"))
	wantRetry(t, "a call that waited MaxWait", c.Unary(t.Context(), key("k", "a")), Aborted)
	g.Release()
	want(t, "the first call", <-first, OK)
}

// With Limit 2, two calls of a key run together and a third finds the key
// full: ResourceExhausted with RetryInfo, not a duplicate's Aborted.
func fullKey(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Limit = 2
	g := NewGate()
	c := a.Serve(t, cfg, Handlers{Unary: func(ctx context.Context, _ string) (string, error) {
		return "ok", g.Pass(ctx)
	}})
	first := held(t, c, g, key("export-1", "a"))
	second := held(t, c, g, key("export-1", "a"))
	wantRetry(t, "a third call", c.Unary(t.Context(), key("export-1", "a")), ResourceExhausted)
	g.Release()
	want(t, "the first call", <-first, OK)
	want(t, "the second call", <-second, OK)
	want(t, "after they ended", c.Unary(t.Context(), key("export-1", "a")), OK)
	if most, total := g.Counts(); most != 2 || total != 3 {
		t.Fatalf("the handler ran %d times, %d at most at once; want 3, two at once", total, most)
	}
}

func fullQueue(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Mode, cfg.MaxWaiters = httplock.Wait, 1
	g := NewGate()
	c := a.Serve(t, cfg, Handlers{Unary: func(ctx context.Context, _ string) (string, error) {
		return "ok", g.Pass(ctx)
	}})
	first := held(t, c, g, key("k", "a"))
	// Two more: one waits, the later one finds the queue full.
	others := make(chan Result, 2)
	for range 2 {
		go func() { others <- c.Unary(t.Context(), key("k", "a")) }()
	}
	wantRetry(t, "a call past MaxWaiters", <-others, ResourceExhausted)
	g.Release()
	want(t, "the first call", <-first, OK)
	want(t, "the waiting call", <-others, OK)
}

func clientGone(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Mode = httplock.Wait
	g := NewGate()
	arrived := make(chan struct{}, 10)
	c := a.Serve(t, cfg, Handlers{
		Unary:   func(ctx context.Context, _ string) (string, error) { return "ok", g.Pass(ctx) },
		Arrived: func() { arrived <- struct{}{} },
	})
	first := held(t, c, g, key("k", "a"))
	<-arrived // the first call's
	ctx, cancel := context.WithCancel(t.Context())
	waiter := make(chan Result, 1)
	go func() { waiter <- c.Unary(ctx, key("k", "a")) }()
	<-arrived // the second call is at the lock: it waits, or finds its client gone
	cancel()
	want(t, "the call whose client left", <-waiter, Canceled)
	if code := c.Served(t); code != Canceled {
		t.Fatalf("the server answered the call whose client left with %v, want Canceled", code)
	}
	g.Release()
	want(t, "the first call", <-first, OK)
	if _, total := g.Counts(); total != 1 {
		t.Fatalf("the handler ran %d times; the call whose client left must not run", total)
	}
	want(t, "after both", c.Unary(t.Context(), key("k", "a")), OK)
}

func handlerPanic(t *testing.T, a Adapter, be Backend) {
	var mu sync.Mutex
	panics := true
	c := a.Serve(t, config(be), Handlers{Unary: func(context.Context, string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if panics {
			panics = false
			panic("handler bug")
		}
		return "ok", nil
	}})
	want(t, "a call whose handler panicked", c.Unary(t.Context(), key("k", "a")), Internal)
	want(t, "the next call", c.Unary(t.Context(), key("k", "a")), OK) // Aborted if the panic had kept the lock
}

// replaying is the cases' Config with Replay, and a handler that answers
// each run with its number.
func replaying(be Backend) (Config, *counter, Handlers) {
	cfg := config(be)
	cfg.Replay = true
	n := &counter{}
	return cfg, n, Handlers{Unary: func(context.Context, string) (string, error) { return n.next(), nil }}
}

func replay(t *testing.T, a Adapter, be Backend) {
	cfg, n, h := replaying(be)
	c := a.Serve(t, cfg, h)
	wantText(t, "the first call", c.Unary(t.Context(), key("pay-1", "order")), "run-1", false)
	wantText(t, "its retry", c.Unary(t.Context(), key("pay-1", "order")), "run-1", true)
	wantText(t, "another key", c.Unary(t.Context(), key("pay-2", "order")), "run-2", false)
	wantText(t, "no key runs", c.Unary(t.Context(), Call{Text: "order"}), "run-3", false)
	if n.runs() != 3 {
		t.Fatalf("the handler ran %d times, want 3", n.runs())
	}
}

func replayMismatch(t *testing.T, a Adapter, be Backend) {
	cfg, n, h := replaying(be)
	c := a.Serve(t, cfg, h)
	wantText(t, "the first call", c.Unary(t.Context(), key("pay-1", "order 1")), "run-1", false)
	r := c.Unary(t.Context(), key("pay-1", "order 2"))
	want(t, "the key with another request", r, FailedPrecondition)
	if !strings.Contains(r.Message, "different request") {
		t.Fatalf("FailedPrecondition says %q; want it to say the key was used for a different request", r.Message)
	}
	if n.runs() != 1 {
		t.Fatalf("the handler ran %d times, want once", n.runs())
	}
}

func replayInFlight(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Replay = true
	g := NewGate()
	c := a.Serve(t, cfg, Handlers{Unary: func(ctx context.Context, _ string) (string, error) {
		return "first", g.Pass(ctx)
	}})
	first := held(t, c, g, key("pay-1", "order"))
	wantRetry(t, "a retry while the first runs", c.Unary(t.Context(), key("pay-1", "order")), Aborted)
	g.Release()
	wantText(t, "the first call", <-first, "first", false)
	wantText(t, "a retry after it", c.Unary(t.Context(), key("pay-1", "order")), "first", true)
}

func replayAfterWait(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Replay, cfg.Mode = true, httplock.Wait
	g := NewGate()
	n := &counter{}
	arrived := make(chan struct{}, 10)
	c := a.Serve(t, cfg, Handlers{
		Unary: func(ctx context.Context, _ string) (string, error) {
			name := n.next()
			return name, g.Pass(ctx)
		},
		Arrived: func() { arrived <- struct{}{} },
	})
	first := held(t, c, g, key("pay-1", "order"))
	<-arrived
	retry := make(chan Result, 1)
	go func() { retry <- c.Unary(t.Context(), key("pay-1", "order")) }()
	<-arrived
	g.Release()
	wantText(t, "the first call", <-first, "run-1", false)
	wantText(t, "the retry that waited", <-retry, "run-1", true)
	if n.runs() != 1 {
		t.Fatalf("the handler ran %d times, want once", n.runs())
	}
}

func replayNoError(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Replay = true
	n := &counter{}
	c := a.Serve(t, cfg, Handlers{Unary: func(context.Context, string) (string, error) {
		if name := n.next(); name == "run-1" {
			return "", errors.New("the first run failed")
		}
		return "done", nil
	}})
	want(t, "a failed call", c.Unary(t.Context(), key("pay-1", "order")), Unknown)
	wantText(t, "its retry runs", c.Unary(t.Context(), key("pay-1", "order")), "done", false)
	wantText(t, "and is recorded", c.Unary(t.Context(), key("pay-1", "order")), "done", true)
}

func streamLocked(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Replay = true // streams are locked all the same, never replayed
	g := NewGate()
	n := &counter{}
	c := a.Serve(t, cfg, Handlers{Stream: func(ctx context.Context, _ string, send func(string) error) error {
		if err := send(n.next()); err != nil {
			return err
		}
		return g.Pass(ctx)
	}})
	first := c.Stream(t.Context(), key("sub-1", "a"))
	if text, end := first.Recv(); end != nil || text != "run-1" {
		t.Fatalf("the first stream: %q, %+v", text, end)
	}
	g.WaitEntered(t)
	wantRetry(t, "a second stream", drain(c.Stream(t.Context(), key("sub-1", "a"))), Aborted)
	g.Release()
	want(t, "the first stream's end", drain(first), OK)
	third := c.Stream(t.Context(), key("sub-1", "a"))
	if text, end := third.Recv(); end != nil || text != "run-2" {
		t.Fatalf("a stream after the first ended: %q, %+v; want it run again, not replayed", text, end)
	}
	want(t, "its end", drain(third), OK)
}

func storeDownClosed(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.StoreTimeout = 500 * time.Millisecond
	n := &counter{}
	c := a.Serve(t, cfg, Handlers{Unary: func(context.Context, string) (string, error) { return n.next(), nil }})
	want(t, "with the store up", c.Unary(t.Context(), key("k", "a")), OK)
	be.Down()
	wantRetry(t, "with the store down", c.Unary(t.Context(), key("k", "a")), Unavailable)
	if n.runs() != 1 {
		t.Fatalf("the handler ran %d times; fail-closed must not run it with the store down", n.runs())
	}
}

func storeDownOpen(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.StoreTimeout, cfg.FailOpen = 500*time.Millisecond, true
	n := &counter{}
	c := a.Serve(t, cfg, Handlers{Unary: func(context.Context, string) (string, error) { return n.next(), nil }})
	be.Down()
	wantText(t, "fail-open with the store down", c.Unary(t.Context(), key("k", "a")), "run-1", false)
}

// hostile are keys a client may send to break a store or a log: hash-tag
// braces, wildcards, commands, NULs, newlines, paths, long UTF-8, a
// right-to-left override. (Valid UTF-8 all: a protobuf string must be.)
var hostile = []string{
	"{user}", "}{", "*", "FLUSHALL\r\n", "a\x00b", "line\nbreak", "../../etc/passwd",
	"${jndi:ldap://x}", strings.Repeat("é", 300), "\u202eevil", "reqlock:{x}",
}

func hostileKeys(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Key = KeyRequest // a message field carries any bytes; metadata would not
	g := NewGate()
	c := a.Serve(t, cfg, Handlers{Unary: func(ctx context.Context, _ string) (string, error) {
		return "ok", g.Pass(ctx)
	}})
	var held []<-chan Result
	for _, k := range hostile {
		done := make(chan Result, 1)
		go func() { done <- c.Unary(t.Context(), Call{Text: k + "|a"}) }()
		g.WaitEntered(t) // each key is its own lock: none waits for another
		held = append(held, done)
	}
	for _, k := range hostile {
		wantRetry(t, "a duplicate of "+k, c.Unary(t.Context(), Call{Text: k + "|b"}), Aborted)
	}
	if be.Keys != nil {
		keys, err := be.Keys(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, sk := range keys {
			for _, k := range hostile {
				if len(k) > 2 && strings.Contains(sk, k) {
					t.Fatalf("store key %q holds the client's key %q unhashed", sk, k)
				}
			}
		}
	}
	g.Release()
	for _, done := range held {
		want(t, "a held call", <-done, OK)
	}
	want(t, "a key over 1024 bytes", c.Unary(t.Context(), Call{Text: strings.Repeat("k", httplock.MaxKeyLen+1) + "|a"}), InvalidArgument)
}

func badKeys(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.KeyRequired = true
	c := a.Serve(t, cfg, Handlers{})
	for what, call := range map[string]Call{
		"a key given twice": {Keys: []string{"a", "b"}},
		"an empty key":      {Keys: []string{""}},
		"no key, required":  {},
		"a key too long":    key(strings.Repeat("k", httplock.MaxKeyLen+1), ""),
	} {
		want(t, what, c.Unary(t.Context(), call), InvalidArgument)
	}
	cfg.Key = KeyRequest
	c = a.Serve(t, cfg, Handlers{})
	want(t, "a request the key func refuses", c.Unary(t.Context(), Call{Text: "refuse"}), InvalidArgument)
	want(t, "a request with its key", c.Unary(t.Context(), Call{Text: "k|a"}), OK)
}

func misconfigured(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Key, cfg.KeyRequired = KeyUser, true
	c := a.Serve(t, cfg, Handlers{})
	want(t, "no user on the context, required", c.Unary(t.Context(), Call{}), Internal)
	want(t, "a user", c.Unary(t.Context(), Call{User: "alice"}), OK)
	cfg.Key, cfg.KeyRequired = KeyRequest, false
	c = a.Serve(t, cfg, Handlers{})
	want(t, "a stream keyed by its request message", drain(c.Stream(t.Context(), Call{Text: "k|a"})), Internal)
}

func join(t *testing.T, a Adapter, be Backend) {
	cfg := config(be)
	cfg.Key = KeyUserHeader
	g := NewGate()
	c := a.Serve(t, cfg, Handlers{Unary: func(ctx context.Context, _ string) (string, error) {
		return "ok", g.Pass(ctx)
	}})
	first := held(t, c, g, Call{User: "alice", Keys: []string{"pay-1"}})
	other := held(t, c, g, Call{User: "bob", Keys: []string{"pay-1"}}) // another user's key
	wantRetry(t, "the same user and key", c.Unary(t.Context(), Call{User: "alice", Keys: []string{"pay-1"}}), Aborted)
	g.Release()
	want(t, "alice's call", <-first, OK)
	want(t, "bob's call", <-other, OK)
}
