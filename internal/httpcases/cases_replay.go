package httpcases

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/httplock"
)

// Headers that steer Order, the handler of the replay cases.
const (
	StatusHeader = "X-Status" // answer this status instead of 201
	PanicHeader  = "X-Panic"  // panic instead of answering
	FlushHeader  = "X-Flush"  // flush the response half-way (streamed)
	SleepHeader  = "X-Sleep"  // take this long (a Go duration) first
	BlockHeader  = "X-Block"  // hold until the probe is released
	PadHeader    = "X-Pad"    // this many more bytes of body
)

// Order is a handler that makes a new order on every run: its body and
// its Location, ETag, Set-Cookie and X-Request-Id carry a fresh random id,
// so that a response that was replayed, not made again, shows.
func (p *Probe) Order(w http.ResponseWriter, r *http.Request) {
	defer p.enter(r)()
	body, _ := io.ReadAll(r.Body)
	if d, err := time.ParseDuration(r.Header.Get(SleepHeader)); err == nil {
		time.Sleep(d)
	}
	if r.Header.Get(BlockHeader) != "" {
		select {
		case <-p.release:
		case <-r.Context().Done():
		case <-time.After(15 * time.Second):
		}
	}
	if r.Header.Get(PanicHeader) != "" {
		panic("boom")
	}
	status := http.StatusCreated
	if s, err := strconv.Atoi(r.Header.Get(StatusHeader)); err == nil {
		status = s
	}
	pad, _ := strconv.Atoi(r.Header.Get(PadHeader))
	id := rand.Text()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Location", "/orders/"+id)
	h.Set("ETag", `"`+id+`"`)
	h.Set("Set-Cookie", "session="+id)
	h.Set("X-Request-Id", id)
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"order":%q,"user":%q,"body":%q,`, id, r.Header.Get(UserHeader), body)
	if r.Header.Get(FlushHeader) != "" {
		_ = http.NewResponseController(w).Flush()
	}
	fmt.Fprintf(w, `"pad":%q}`, strings.Repeat("x", pad))
}

// keepsRecords skips a replay case on a store that cannot keep records.
func keepsRecords(e *Env) {
	if _, ok := e.Backend.Store.(store.Recorder); !ok {
		e.T.Skip("this store keeps no records: replay is refused at configuration")
	}
}

// replayRoute is POST /orders/{id} with replay, keyed by user and
// Idempotency-Key, answered by p.Order.
func replayRoute(e *Env, p *Probe, cfg httplock.Config) string {
	if cfg.Locker == nil {
		cfg.Locker = e.Locker()
	}
	if cfg.Replay == nil {
		cfg.Replay = &httplock.ReplayConfig{}
	}
	return e.Serve(Route{Method: "POST", Path: "/orders/{id}", Lock: cfg, Key: KeySource{Kind: FromUserAndIdempotencyKey}, Handler: http.HandlerFunc(p.Order)})
}

// order sends a POST with body as user with the idempotency key ik.
func order(e *Env, url, user, ik, body string, hdr ...string) Result {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hdr = append([]string{UserHeader, user, httplock.HeaderIdempotencyKey, strconv.Quote(ik)}, hdr...)
	return e.DoBody(ctx, "POST", url, []byte(body), hdr...)
}

// expectFresh checks a response the handler made for this request.
func expectFresh(e *Env, r Result, status int) {
	e.T.Helper()
	if r.Err != nil || r.Status != status {
		e.T.Fatalf("want a fresh %d, got %d %v %s", status, r.Status, r.Err, r.Body)
	}
	if v := r.Header.Get(httplock.HeaderIdempotentReplayed); v != "" {
		e.T.Fatalf("fresh response has %s: %q", httplock.HeaderIdempotentReplayed, v)
	}
}

// expectReplay checks that r is first, replayed: same status and body byte
// for byte, the allowed headers, and none of the others.
func expectReplay(e *Env, r, first Result) {
	e.T.Helper()
	if r.Err != nil || r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
		e.T.Fatalf("want the replay of %d %s\ngot %d %v %s", first.Status, first.Body, r.Status, r.Err, r.Body)
	}
	if v := r.Header.Get(httplock.HeaderIdempotentReplayed); v != "true" {
		e.T.Fatalf("%s %q, want \"true\"", httplock.HeaderIdempotentReplayed, v)
	}
	for _, h := range []string{"Content-Type", "Location", "ETag"} {
		if got, want := r.Header.Get(h), first.Header.Get(h); got != want {
			e.T.Errorf("replayed %s %q, want %q", h, got, want)
		}
	}
	for _, h := range []string{"Set-Cookie", "X-Request-Id"} {
		if v := r.Header.Get(h); v != "" {
			e.T.Errorf("replayed %s %q: not on the allow-list", h, v)
		}
	}
}

func expectCalls(e *Env, p *Probe, want int) {
	e.T.Helper()
	if calls, _ := p.Stats(); calls != want {
		e.T.Fatalf("handler ran %d times, want %d", calls, want)
	}
}

// The second request with a key gets the first one's response, byte for
// byte, and the handler does not run again.
func replayRecorded(e *Env) {
	keepsRecords(e)
	p := e.Probe()
	url := replayRoute(e, p, httplock.Config{}) + "/orders/1"
	first := order(e, url, "alice", "k1", `{"item":"tea"}`)
	expectFresh(e, first, http.StatusCreated)
	if first.Header.Get("Set-Cookie") == "" {
		e.T.Fatal("the first response lost its own Set-Cookie")
	}
	for range 3 {
		expectReplay(e, order(e, url, "alice", "k1", `{"item":"tea"}`), first)
	}
	expectCalls(e, p, 1)
}

// The same key with another body or another path is refused with 422, and
// runs nothing.
func replayMismatch(e *Env) {
	keepsRecords(e)
	p := e.Probe()
	url := replayRoute(e, p, httplock.Config{})
	expectFresh(e, order(e, url+"/orders/1", "alice", "k1", `{"item":"tea"}`), http.StatusCreated)
	expect(e, order(e, url+"/orders/1", "alice", "k1", `{"item":"cake"}`), http.StatusUnprocessableEntity, "idempotency_key_reused")
	expect(e, order(e, url+"/orders/2", "alice", "k1", `{"item":"tea"}`), http.StatusUnprocessableEntity, "idempotency_key_reused")
	expect(e, order(e, url+"/orders/1?gift=1", "alice", "k1", `{"item":"tea"}`), http.StatusUnprocessableEntity, "idempotency_key_reused")
	expectCalls(e, p, 1)
}

// In flight, Reject mode: 409 as without replay; once the first is done,
// its response.
func replayInFlightRejected(e *Env) {
	keepsRecords(e)
	p := e.Probe()
	url := replayRoute(e, p, httplock.Config{}) + "/orders/1"
	held := make(chan Result, 1)
	go func() { held <- order(e, url, "alice", "k1", "x", BlockHeader, "1") }()
	p.Entered(e.T)
	expect(e, order(e, url, "alice", "k1", "x"), http.StatusConflict, "locked")
	p.Release()
	first := <-held
	expectFresh(e, first, http.StatusCreated)
	expectReplay(e, order(e, url, "alice", "k1", "x"), first)
	expectCalls(e, p, 1)
}

// In flight, Wait mode: the duplicates wait for the first and get its
// response; the handler runs once.
func replayWaitReplays(e *Env) {
	keepsRecords(e)
	p := e.Probe()
	url := replayRoute(e, p, httplock.Config{Mode: httplock.Wait, MaxWait: 15 * time.Second}) + "/orders/1"
	held := make(chan Result, 1)
	go func() { held <- order(e, url, "alice", "k1", "x", BlockHeader, "1") }()
	p.Entered(e.T)
	const n = 5
	waiters := make(chan Result, n)
	for range n {
		go func() { waiters <- order(e, url, "alice", "k1", "x") }()
	}
	time.Sleep(200 * time.Millisecond) // let them reach the wait
	p.Release()
	first := <-held
	expectFresh(e, first, http.StatusCreated)
	for _, r := range collect(e, waiters, n) {
		expectReplay(e, r, first)
	}
	expectCalls(e, p, 1)
}

// What is not recorded leaves the key free: a retry runs the handler, and
// its answer is the one recorded. A 4xx is an answer, and is recorded.
func replayNotRecorded(e *Env) {
	keepsRecords(e)
	p := e.Probe()
	cfg := httplock.Config{Replay: &httplock.ReplayConfig{MaxResponseBody: 256}}
	base := replayRoute(e, p, cfg)
	calls := 0
	for i, c := range []struct {
		name   string
		status int // what the failed attempt answers
		hdr    []string
	}{
		{"5xx", 503, []string{StatusHeader, "503"}},
		{"429", 429, []string{StatusHeader, "429"}},
		{"panic", 500, []string{PanicHeader, "1"}},
		{"flushed", 201, []string{FlushHeader, "1"}},
		{"body over the bound", 201, []string{PadHeader, "300"}},
	} {
		url := base + "/orders/" + strconv.Itoa(i)
		ik := "k-" + c.name
		if r := order(e, url, "alice", ik, "x", c.hdr...); r.Err != nil || r.Status != c.status {
			e.T.Fatalf("%s: got %d %v, want %d", c.name, r.Status, r.Err, c.status)
		}
		retry := order(e, url, "alice", ik, "x")
		expectFresh(e, retry, http.StatusCreated)
		expectReplay(e, order(e, url, "alice", ik, "x"), retry)
		if calls += 2; p.Calls("alice") != calls {
			e.T.Fatalf("%s: handler ran %d times, want %d: the failed attempt was recorded", c.name, p.Calls("alice"), calls)
		}
	}
	url := base + "/orders/400"
	bad := order(e, url, "alice", "k-400", "x", StatusHeader, "400")
	expectFresh(e, bad, http.StatusBadRequest)
	expectReplay(e, order(e, url, "alice", "k-400", "x"), bad)
}

// A record is kept for the retention, then the key is free again.
func replayExpires(e *Env) {
	keepsRecords(e)
	p := e.Probe()
	const retention = time.Second
	url := replayRoute(e, p, httplock.Config{Replay: &httplock.ReplayConfig{Retention: retention}}) + "/orders/1"
	first := order(e, url, "alice", "k1", "x")
	expectFresh(e, first, http.StatusCreated)
	expectReplay(e, order(e, url, "alice", "k1", "x"), first)
	time.Sleep(retention + 200*time.Millisecond)
	expectFresh(e, order(e, url, "alice", "k1", "x"), http.StatusCreated)
	expectCalls(e, p, 2)
}

// Records are scoped like locks: user B sending user A's Idempotency-Key
// gets a run of its own and nothing of A's.
func replayCrossUser(e *Env) {
	keepsRecords(e)
	p := e.Probe()
	url := replayRoute(e, p, httplock.Config{}) + "/orders/1"
	a := order(e, url, "alice", "k1", "x")
	expectFresh(e, a, http.StatusCreated)
	b := order(e, url, "bob", "k1", "x")
	expectFresh(e, b, http.StatusCreated)
	if bytes.Equal(a.Body, b.Body) || !bytes.Contains(b.Body, []byte(`"user":"bob"`)) {
		e.T.Fatalf("bob got %s after alice got %s", b.Body, a.Body)
	}
	expectReplay(e, order(e, url, "alice", "k1", "x"), a)
	expectReplay(e, order(e, url, "bob", "k1", "x"), b)
	if p.Calls("alice") != 1 || p.Calls("bob") != 1 {
		e.T.Fatalf("alice ran %d, bob %d; want once each", p.Calls("alice"), p.Calls("bob"))
	}
}

// A holder paused past its lease (no watchdog) cannot write its record
// over the one of the holder that took the key after it: the record is
// written only while the writer's token holds the lock.
func replayFenced(e *Env) {
	keepsRecords(e)
	p := e.Probe()
	const lease = 300 * time.Millisecond
	l := e.Locker(core.WithoutWatchdog(), core.WithTTL(lease))
	url := replayRoute(e, p, httplock.Config{Locker: l}) + "/orders/1"
	late := make(chan Result, 1)
	go func() { late <- order(e, url, "alice", "k1", "x", SleepHeader, "1500ms") }()
	p.Entered(e.T)
	time.Sleep(lease + 200*time.Millisecond) // the first holder's lease runs out
	second := order(e, url, "alice", "k1", "x")
	expectFresh(e, second, http.StatusCreated)
	first := <-late
	expectFresh(e, first, http.StatusCreated)
	if bytes.Equal(first.Body, second.Body) {
		e.T.Fatal("two runs gave the same body")
	}
	// The late holder's response went to its own client only.
	expectReplay(e, order(e, url, "alice", "k1", "x"), second)
	expectCalls(e, p, 2)
}

// A request body over MaxRequestBody cannot be fingerprinted: 413, and
// nothing runs.
func replayRequestTooLarge(e *Env) {
	keepsRecords(e)
	p := e.Probe()
	url := replayRoute(e, p, httplock.Config{Replay: &httplock.ReplayConfig{MaxRequestBody: 16}}) + "/orders/1"
	expect(e, order(e, url, "alice", "k1", strings.Repeat("x", 17)), http.StatusRequestEntityTooLarge, "body_too_large")
	expectFresh(e, order(e, url, "alice", "k2", strings.Repeat("x", 16)), http.StatusCreated)
	expectCalls(e, p, 1)
}

// A store that keeps no records (Redlock) is refused when the middleware
// is built, not found out per request.
func replayRefusedWithoutRecords(e *Env) {
	if _, ok := e.Backend.Store.(store.Recorder); ok {
		e.T.Skip("this store keeps records")
	}
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, httplock.ErrInvalidConfig) || !errors.Is(err, core.ErrNoRecords) {
			e.T.Fatalf("building the middleware: %v; want a panic with ErrInvalidConfig and core.ErrNoRecords", err)
		}
	}()
	replayRoute(e, e.Probe(), httplock.Config{})
	e.T.Fatal("replay over a store without records was accepted")
}
