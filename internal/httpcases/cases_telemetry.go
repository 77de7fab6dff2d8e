package httpcases

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/httplock"
)

// TelemetryCases check Config.Telemetry: the metrics for each outcome an
// adapter can produce, the request span's annotations, and the log lines'
// attributes.
var TelemetryCases = []Case{
	{"telemetry_outcomes", telemetryOutcomes},
	{"telemetry_replay", telemetryReplay},
	{"telemetry_store_down", telemetryStoreDown},
	{"telemetry_client_gone", telemetryClientGone},
	{"telemetry_lock_lost", telemetryLockLost},
	{"telemetry_spans", telemetrySpans},
	{"telemetry_limit", telemetryLimit},
}

// RunTelemetry runs TelemetryCases for fw on the memory store and on a
// real redis-server.
func RunTelemetry(t *testing.T, fw Framework) {
	for _, st := range Stores {
		if st.Name != "memory" && st.Name != "redis" {
			continue
		}
		t.Run(st.Name, func(t *testing.T) {
			for _, c := range TelemetryCases {
				t.Run(c.Name, func(t *testing.T) {
					t.Parallel()
					tr := &http.Transport{MaxIdleConnsPerHost: 64}
					t.Cleanup(tr.CloseIdleConnections)
					c.Run(&Env{T: t, FW: fw, Backend: st.Open(t), client: &http.Client{Transport: tr}})
				})
			}
		})
	}
}

// expectCount waits for the requests counter of outcome and status to reach
// n: a request is counted once its handler has returned, which may be just
// after its client has the answer.
func expectCount(e *Env, tel *Telemetry, outcome string, status int64, n int64) {
	e.T.Helper()
	Eventually(e.T, "reqlock.http.requests "+outcome, func() bool { return tel.Count(e.T, outcome, status) == n })
}

// Every outcome a request can have without a store failure, counted with
// its status, its wait timed, and scopes that hold neither key nor user.
func telemetryOutcomes(e *Env) {
	tel := NewTelemetry(e.T)
	var logs LogBuffer
	base := httplock.Config{Locker: e.Locker(), Telemetry: tel.Config(), Logger: logs.Logger()}
	wait := base
	wait.Mode, wait.MaxWait = httplock.Wait, 300*time.Millisecond
	waiters := base
	waiters.Mode, waiters.MaxWait, waiters.MaxWaiters = httplock.Wait, 20*time.Second, 1
	required := base
	required.KeyRequired = true
	pr, pw, pq, p := e.Probe(), e.Probe(), e.Probe(), e.Probe()
	url := e.Serve(
		userRoute("POST", "/orders/{id}", base, pr.BlockUser("alice")),
		userRoute("POST", "/wait", wait, pw.BlockUser("alice")),
		userRoute("POST", "/waiters", waiters, pq.BlockUser("alice")),
		Route{Method: "POST", Path: "/required", Lock: required, Key: KeySource{Kind: FromHeader, Name: "X-Key"}, Handler: p.Sleep(0)},
		userRoute("POST", "/required-user", required, p.Sleep(0)),
		Route{Method: "POST", Path: "/header", Lock: base, Key: KeySource{Kind: FromHeader, Name: "X-Key"}, Handler: p.Sleep(0)},
		Route{Method: "POST", Path: "/account", Lock: base, Key: KeySource{Kind: FromValue, Name: AccountKey}, Handler: p.Sleep(0)},
	)
	expectOK(e, e.Send("POST", url+"/orders/1", UserHeader, "bob"))
	expectOK(e, e.Send("POST", url+"/orders/1")) // no user: unlocked
	pr.Entered(e.T)                              // bob
	pr.Entered(e.T)                              // no one

	finish := e.Hold(pr, "POST", url+"/orders/1", UserHeader, "alice")
	expect(e, e.Send("POST", url+"/orders/1", UserHeader, "alice"), http.StatusConflict, "locked")
	finish()

	finish = e.Hold(pw, "POST", url+"/wait", UserHeader, "alice")
	expect(e, e.Send("POST", url+"/wait", UserHeader, "alice"), http.StatusConflict, "locked")
	finish()

	finish = e.Hold(pq, "POST", url+"/waiters", UserHeader, "alice")
	waiter := e.Async("POST", url+"/waiters", UserHeader, "alice")
	time.Sleep(300 * time.Millisecond) // let it join the queue
	expect(e, e.Send("POST", url+"/waiters", UserHeader, "alice"), http.StatusTooManyRequests, "too_many_waiters")
	finish()
	expectOK(e, <-waiter)

	expect(e, e.Send("POST", url+"/required"), http.StatusBadRequest, "key_missing")
	expect(e, e.Send("POST", url+"/required-user"), http.StatusInternalServerError, "key_misconfigured")
	expect(e, e.Send("POST", url+"/header", "X-Key", "a", "X-Key", "b"), http.StatusBadRequest, "key_invalid")
	expect(e, e.Send("POST", url+"/header", "X-Key", strings.Repeat("k", httplock.MaxKeyLen+1)), http.StatusBadRequest, "key_too_long")
	if r := e.Send("POST", url+"/account", UserHeader, "alice"); r.Status != http.StatusInternalServerError {
		e.T.Fatalf("context value of the wrong type: got %d, want 500", r.Status)
	}

	for _, c := range []struct {
		outcome string
		status  int64
		n       int64
		waits   int64
	}{
		{httplock.OutcomeLocked, 200, 5, 5}, // bob, and the holder on each route, and the waiter
		{httplock.OutcomeUnlocked, 200, 1, 0},
		{httplock.OutcomeRejected, 409, 1, 1},
		{httplock.OutcomeWaitTimeout, 409, 1, 1},
		{httplock.OutcomeTooManyWaiters, 429, 1, 1},
		{httplock.OutcomeKeyMissing, 400, 1, 0},
		{httplock.OutcomeKeyInvalid, 400, 1, 0},
		{httplock.OutcomeKeyTooLong, 400, 1, 0},
		{httplock.OutcomeKeyMisconfigured, 500, 2, 0}, // a value of the wrong type, and none
	} {
		expectCount(e, tel, c.outcome, c.status, c.n)
		if got := tel.Waits(e.T, c.outcome); got != c.waits {
			e.T.Errorf("%s: %d waits timed, want %d", c.outcome, got, c.waits)
		}
	}
	for _, s := range tel.Streams(e.T, httplock.MetricRequests) {
		if !strings.HasPrefix(s.Scope, "POST /") || strings.Contains(s.Scope, "alice") || strings.Contains(s.Scope, "bob") {
			e.T.Errorf("scope attribute %q: want the method and route template only", s.Scope)
		}
	}
	for line, n := range map[string]int{
		`level=ERROR msg="reqlock: the lock key cannot be made`:                                                 1,
		`reqlock.scope="POST /account" reqlock.outcome=key_misconfigured error=`:                                1,
		`level=WARN msg="reqlock: no value on the request context`:                                              1, // the route that runs unlocked
		`level=ERROR msg="reqlock: no value on the request context`:                                             1, // the route that requires it
		`reqlock.scope="POST /required-user" reqlock.outcome=key_misconfigured reqlock.reason=no_context_value`: 1,
		`reqlock.reason=no_context_value`:                                                                       2,
	} {
		if logs.Count(line) != n {
			e.T.Errorf("%d log lines with %q, want %d, in:\n%s", logs.Count(line), line, n, logs.String())
		}
	}
}

// A replayed response and a reused key's 422, and a record this version
// cannot read.
func telemetryReplay(e *Env) {
	keepsRecords(e)
	tel := NewTelemetry(e.T)
	p := e.Probe()
	l := e.Locker()
	url := replayRoute(e, p, httplock.Config{Locker: l, Telemetry: tel.Config(), Logger: Quiet}) + "/orders/1"
	first := order(e, url, "alice", "k1", "a")
	expectFresh(e, first, http.StatusCreated)
	expectReplay(e, order(e, url, "alice", "k1", "a"), first)
	if r := order(e, url, "alice", "k1", "b"); r.Status != http.StatusUnprocessableEntity {
		e.T.Fatalf("reused key: got %d, want 422", r.Status)
	}
	expectCount(e, tel, httplock.OutcomeLocked, 201, 1)
	expectCount(e, tel, httplock.OutcomeReplayed, 201, 1)
	expectCount(e, tel, httplock.OutcomeFingerprint, 422, 1)

	var logs LogBuffer
	cfg := httplock.Config{Locker: l, Telemetry: tel.Config(), Logger: logs.Logger(), Scope: "unreadable", Replay: &httplock.ReplayConfig{}}
	bad := e.Serve(Route{Method: "POST", Path: "/bad", Lock: cfg, Key: KeySource{Kind: FromHeader, Name: "X-Key"}, Handler: http.HandlerFunc(p.Order)})
	lk, err := l.TryObtain(context.Background(), httplock.LockKey("unreadable", "k"))
	if err != nil {
		e.T.Fatal(err)
	}
	if err := lk.ReleaseRecording(context.Background(), []byte("not a response"), time.Minute); err != nil {
		e.T.Fatal(err)
	}
	if r := e.Send("POST", bad+"/bad", "X-Key", "k"); r.Status != http.StatusInternalServerError {
		e.T.Fatalf("unreadable record: got %d, want 500", r.Status)
	}
	expectCount(e, tel, httplock.OutcomeRecordUnreadable, 500, 1)
	if logs.Count(`level=ERROR msg="reqlock: a key's record cannot be read; answering 500" reqlock.scope=unreadable reqlock.outcome=record_unreadable error=`) != 1 {
		e.T.Errorf("log:\n%s", logs.String())
	}
}

// The store down: 503 fail-closed, the handler run unlocked fail-open, each
// logged as a warning with its outcome.
func telemetryStoreDown(e *Env) {
	if e.Backend.Down == nil {
		e.T.Skip("this store cannot go down")
	}
	tel := NewTelemetry(e.T)
	var logs LogBuffer
	p := e.Probe()
	closed := httplock.Config{Locker: e.OutageLocker(), StoreTimeout: 250 * time.Millisecond, Telemetry: tel.Config(), Logger: logs.Logger()}
	open := closed
	open.FailOpen = true
	url := e.Serve(userRoute("POST", "/closed", closed, p.Sleep(0)), userRoute("POST", "/open", open, p.Sleep(0)))
	e.Backend.Down()
	expect(e, e.Send("POST", url+"/closed", UserHeader, "alice"), http.StatusServiceUnavailable, "lock_unavailable")
	expectOK(e, e.Send("POST", url+"/open", UserHeader, "alice"))
	expectCount(e, tel, httplock.OutcomeUnavailable, 503, 1)
	expectCount(e, tel, httplock.OutcomeFailOpen, 200, 1)
	for _, o := range []string{httplock.OutcomeUnavailable, httplock.OutcomeFailOpen} {
		if tel.Waits(e.T, o) != 1 {
			e.T.Errorf("%s: the attempt on the store is not timed", o)
		}
	}
	for _, line := range []string{
		`level=WARN msg="reqlock: lock store unavailable; answering 503" reqlock.scope="POST /closed" reqlock.outcome=unavailable error=`,
		`level=WARN msg="reqlock: lock store unavailable; running requests unlocked (fail-open)" reqlock.scope="POST /open" reqlock.outcome=fail_open error=`,
	} {
		if logs.Count(line) != 1 {
			e.T.Errorf("no log line with %q in:\n%s", line, logs.String())
		}
	}
}

// A client that leaves while its request waits is counted, with 499.
func telemetryClientGone(e *Env) {
	tel := NewTelemetry(e.T)
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker(), Mode: httplock.Wait, MaxWait: 30 * time.Second, Telemetry: tel.Config()}
	url := e.Serve(userRoute("POST", "/orders", cfg, p.Block))
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	ctx, cancel := context.WithCancel(context.Background())
	waiter := make(chan Result, 1)
	go func() { waiter <- e.Do(ctx, "POST", url+"/orders", UserHeader, "alice") }()
	time.Sleep(300 * time.Millisecond) // let it reach the wait
	cancel()
	<-waiter
	expectCount(e, tel, httplock.OutcomeClientGone, httplock.StatusClientClosedRequest, 1)
	finish()
	if tel.Waits(e.T, httplock.OutcomeClientGone) != 1 {
		e.T.Error("the wait of the client that left is not timed")
	}
}

// A handler whose lock is lost while it runs is counted as lock_lost.
func telemetryLockLost(e *Env) {
	tel := NewTelemetry(e.T)
	l := e.Locker(core.WithTTL(300 * time.Millisecond))
	entered := make(chan struct{})
	url := e.Serve(userRoute("POST", "/orders", httplock.Config{Locker: l, Scope: "lost", Telemetry: tel.Config()},
		func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			w.WriteHeader(http.StatusOK)
		}))
	held := e.Async("POST", url+"/orders", UserHeader, "alice")
	<-entered
	skey, _ := l.StoreKey(httplock.LockKey("lost", "alice"))
	e.Backend.Vanish(skey)
	expectOK(e, <-held)
	expectCount(e, tel, httplock.OutcomeLockLost, 200, 1)
}

// spanSpy is a store that notes the span on the context of each call, to
// show that the Locker is given the request's context: core's own spans
// are children of whatever span that context carries.
type spanSpy struct {
	core.Store
	mu       sync.Mutex
	acquires []trace.SpanID
	releases []trace.SpanID
}

func (s *spanSpy) Acquire(ctx context.Context, lease store.Lease) (store.Grant, error) {
	s.mu.Lock()
	s.acquires = append(s.acquires, trace.SpanContextFromContext(ctx).SpanID())
	s.mu.Unlock()
	return s.Store.Acquire(ctx, lease)
}

func (s *spanSpy) Release(ctx context.Context, key, token string) error {
	s.mu.Lock()
	s.releases = append(s.releases, trace.SpanContextFromContext(ctx).SpanID())
	s.mu.Unlock()
	return s.Store.Release(ctx, key, token)
}

func (s *spanSpy) saw(calls *[]trace.SpanID, id trace.SpanID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range *calls {
		if c == id {
			return true
		}
	}
	return false
}

// Under the framework's own instrumentation, the request span carries the
// outcome, a rejected duplicate's span says why, and the Locker works in the
// request span's context.
func telemetrySpans(e *Env) {
	tel := NewTelemetry(e.T)
	spy := &spanSpy{Store: e.Backend.Store}
	l := core.NewLocker(spy, core.WithLogger(Quiet))
	p := e.Probe()
	url := e.FW.ServeTraced(e.T, tel.TP, []Route{userRoute("POST", "/orders/{id}", httplock.Config{Locker: l, Telemetry: tel.Config()}, p.Block)})
	e.T.Cleanup(p.Release)
	finish := e.Hold(p, "POST", url+"/orders/1", UserHeader, "alice")
	expect(e, e.Send("POST", url+"/orders/1", UserHeader, "alice"), http.StatusConflict, "locked")
	finish()
	Eventually(e.T, "two server spans", func() bool { return len(tel.ServerSpans()) == 2 })
	var locked, rejected bool
	for _, s := range tel.ServerSpans() {
		switch outcome := SpanAttr(s.Attributes, "reqlock.outcome"); outcome {
		case httplock.OutcomeLocked:
			locked = true
			if len(s.Events) != 0 {
				e.T.Errorf("span of the request that ran has events %v", s.Events)
			}
			if !spy.saw(&spy.releases, s.SpanContext.SpanID()) {
				e.T.Error("the release was not made in the request span's context")
			}
		case httplock.OutcomeRejected:
			rejected = true
			if len(s.Events) != 1 || s.Events[0].Name != httplock.EventRejected {
				e.T.Fatalf("rejected duplicate's span events %v, want one %s", s.Events, httplock.EventRejected)
			}
			ev := s.Events[0].Attributes
			if SpanAttr(ev, "reason") != "rejected" || SpanAttr(ev, "http.response.status_code") != "409" || SpanAttr(ev, "retry_after_s") != "1" {
				e.T.Errorf("event attributes %v, want reason rejected, status 409, retry_after_s 1", ev)
			}
		default:
			e.T.Errorf("server span %q has reqlock.outcome %q", s.Name, outcome)
			continue
		}
		if !spy.saw(&spy.acquires, s.SpanContext.SpanID()) {
			e.T.Errorf("%s request: the Locker's attempt was not made in the request span's context", SpanAttr(s.Attributes, "reqlock.outcome"))
		}
	}
	if !locked || !rejected {
		e.T.Fatalf("spans: locked %v, rejected %v; want both", locked, rejected)
	}
}
