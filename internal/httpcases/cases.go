package httpcases

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// Cases is the table every adapter runs.
var Cases = []Case{
	{"reject_duplicates", rejectDuplicates},
	{"problem_bodies_carry_code", problemBodiesCarryCode},
	{"wait_serializes", waitSerializes},
	{"sequential_requests_pass", sequentialRequests},
	{"users_independent", usersIndependent},
	{"routes_independent", routesIndependent},
	{"methods_independent", methodsIndependent},
	{"shared_scope_blocks", sharedScope},
	{"param_key", paramKey},
	{"query_key", queryKey},
	{"idempotency_key", idempotencyKey},
	{"key_too_long", keyTooLong},
	{"no_key_runs_unlocked", noKeyRunsUnlocked},
	{"key_required", keyRequired},
	{"wait_gives_up_after_max_wait", waitGivesUp},
	{"too_many_waiters", tooManyWaiters},
	{"retry_after_capped_by_lease", retryAfterCapped},
	{"lock_on_context", lockOnContext},
	{"lock_lost_cancels_context", lockLost},
	{"panic_releases_lock", panicReleases},
	{"client_gone_while_waiting", clientGone},
	{"deadline_while_waiting", deadlineWhileWaiting},
	{"deadline_while_store_hangs", deadlineWhileStoreHangs},
	{"store_down", storeDown},
	{"store_hangs", storeHangs},
	{"store_hangs_while_waiting", storeHangsWhileWaiting},
	{"fail_open", failOpen},
	{"failed_release_retried", failedReleaseRetried},
	{"empty_idempotency_key", emptyIdempotencyKey},
	{"malformed_query_key", malformedQueryKey},
	{"context_value_missing", contextValueMissing},
	{"context_value_wrong_type", contextValueWrongType},
	{"outage_logged_once", outageLoggedOnce},
	{"max_wait_bounds_first_attempt", maxWaitBoundsFirstAttempt},
	{"client_gone_with_body_while_waiting", clientGoneWithBody},
	{"body_intact_after_wait", bodyIntactAfterWait},
	{"replay_recorded", replayRecorded},
	{"replay_mismatch_422", replayMismatch},
	{"replay_in_flight_409", replayInFlightRejected},
	{"replay_wait_replays", replayWaitReplays},
	{"replay_not_recorded", replayNotRecorded},
	{"replay_expires", replayExpires},
	{"replay_cross_user", replayCrossUser},
	{"replay_fenced", replayFenced},
	{"replay_request_too_large", replayRequestTooLarge},
	{"replay_refused_without_records", replayRefusedWithoutRecords},
	{"limit_rejects_when_full", limitRejectsWhenFull},
	{"limit_wait_serves_in_turn", limitWaitServesInTurn},
	{"limit_refused_without_permits", limitRefusedWithoutPermits},
	{"limit_panic_gives_permit_back", limitPanicGivesPermitBack},
	{"limit_client_gone_gives_permit_back", limitClientGoneGivesPermitBack},
	{"replay_in_doubt_refused", replayInDoubtRefused},
	{"replay_in_doubt_run_again", replayInDoubtRunAgain},
	{"replay_clean_failure_not_in_doubt", replayCleanFailureNotInDoubt},
}

func userRoute(method, path string, cfg httplock.Config, h http.HandlerFunc) Route {
	return Route{Method: method, Path: path, Lock: cfg, Key: KeySource{Kind: FromUser}, Handler: h}
}

// expect checks a rejection: status, problem body, Retry-After.
func expect(e *Env, r Result, status int, code string) {
	t := e.T
	t.Helper()
	if r.Err != nil {
		t.Fatalf("want %d %s, got error %v", status, code, r.Err)
	}
	if r.Status != status {
		t.Fatalf("want %d %s, got %d %s", status, code, r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, httplock.ContentTypeProblem) {
		t.Errorf("Content-Type %q, want %s", ct, httplock.ContentTypeProblem)
	}
	if p := r.Problem(); p.Code != code || p.Status != status {
		t.Errorf("problem %+v, want code %q status %d", p, code, status)
	}
	ra := r.Header.Get(httplock.HeaderRetryAfter)
	switch status {
	case http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		if ra != "1" {
			t.Errorf("Retry-After %q, want \"1\"", ra)
		}
	default:
		if ra != "" {
			t.Errorf("Retry-After %q on a %d", ra, status)
		}
	}
}

func expectOK(e *Env, r Result) {
	e.T.Helper()
	if r.Err != nil || r.Status != http.StatusOK {
		e.T.Fatalf("want 200, got %d %v %s", r.Status, r.Err, r.Body)
	}
}

// collect gathers n results, failing after 20s.
func collect(e *Env, ch <-chan Result, n int) []Result {
	e.T.Helper()
	out := make([]Result, 0, n)
	timeout := time.After(20 * time.Second)
	for len(out) < n {
		select {
		case r := <-ch:
			out = append(out, r)
		case <-timeout:
			e.T.Fatalf("only %d of %d responses within 20s", len(out), n)
		}
	}
	return out
}

func fanOut(e *Env, n int, method, url string, hdr ...string) <-chan Result {
	ch := make(chan Result, n)
	for range n {
		go func() { ch <- e.Send(method, url, hdr...) }()
	}
	return ch
}

func rejectDuplicates(e *Env) {
	p := e.Probe()
	url := e.Serve(userRoute("POST", "/orders/{id}", httplock.Config{Locker: e.Locker()}, p.Block))
	ch := fanOut(e, 20, "POST", url+"/orders/7", UserHeader, "alice")
	rejected := collect(e, ch, 19) // the holder answers only once released
	p.Release()
	for _, r := range rejected {
		expect(e, r, http.StatusConflict, "locked")
	}
	last := collect(e, ch, 1)[0]
	if e.Backend.SplitVotes && last.Status == http.StatusConflict {
		// Every attempt won some nodes and none a majority: all were
		// turned away, none ran. The next request, alone, gets through.
		expect(e, last, http.StatusConflict, "locked")
		expectOK(e, e.Send("POST", url+"/orders/7", UserHeader, "alice"))
	} else {
		expectOK(e, last)
	}
	if calls, _ := p.Stats(); calls != 1 {
		e.T.Fatalf("handler ran %d times, want 1", calls)
	}
}

func waitSerializes(e *Env) {
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker(), Mode: httplock.Wait, MaxWait: 15 * time.Second}
	url := e.Serve(userRoute("POST", "/orders/{id}", cfg, p.Sleep(5*time.Millisecond)))
	for _, r := range collect(e, fanOut(e, 20, "POST", url+"/orders/7", UserHeader, "alice"), 20) {
		expectOK(e, r)
	}
	if calls, maxIn := p.Stats(); calls != 20 || maxIn != 1 {
		e.T.Fatalf("calls %d, most at once %d; want 20 and 1", calls, maxIn)
	}
}

func sequentialRequests(e *Env) {
	p := e.Probe()
	url := e.Serve(userRoute("POST", "/orders", httplock.Config{Locker: e.Locker()}, p.Sleep(0)))
	for range 10 {
		expectOK(e, e.Send("POST", url+"/orders", UserHeader, "alice"))
	}
}

func usersIndependent(e *Env) {
	p := e.Probe()
	url := e.Serve(userRoute("POST", "/orders", httplock.Config{Locker: e.Locker()}, p.BlockUser("alice")))
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	expectOK(e, e.Send("POST", url+"/orders", UserHeader, "bob"))
	finish()
}

func routesIndependent(e *Env) {
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker()}
	url := e.Serve(
		userRoute("POST", "/orders", cfg, p.Block),
		userRoute("POST", "/payments", cfg, p.Sleep(0)),
	)
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	expectOK(e, e.Send("POST", url+"/payments", UserHeader, "alice"))
	expect(e, e.Send("POST", url+"/orders", UserHeader, "alice"), http.StatusConflict, "locked")
	finish()
}

func methodsIndependent(e *Env) {
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker()}
	url := e.Serve(
		userRoute("POST", "/orders", cfg, p.Block),
		userRoute("PUT", "/orders", cfg, p.Sleep(0)),
	)
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	expectOK(e, e.Send("PUT", url+"/orders", UserHeader, "alice"))
	finish()
}

func sharedScope(e *Env) {
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker(), Scope: "money"}
	url := e.Serve(
		userRoute("POST", "/orders", cfg, p.Block),
		userRoute("POST", "/payments", cfg, p.Sleep(0)),
	)
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	expect(e, e.Send("POST", url+"/payments", UserHeader, "alice"), http.StatusConflict, "locked")
	expectOK(e, e.Send("POST", url+"/payments", UserHeader, "bob"))
	finish()
}

func paramKey(e *Env) {
	p := e.Probe()
	url := e.Serve(Route{
		Method: "POST", Path: "/orders/{id}/pay",
		Lock: httplock.Config{Locker: e.Locker()}, Key: KeySource{Kind: FromParam, Name: "id"},
		Handler: p.BlockUser("alice"),
	})
	finish := e.Hold(p, "POST", url+"/orders/1/pay", UserHeader, "alice")
	expect(e, e.Send("POST", url+"/orders/1/pay", UserHeader, "bob"), http.StatusConflict, "locked")
	expectOK(e, e.Send("POST", url+"/orders/2/pay", UserHeader, "bob"))
	finish()
}

func queryKey(e *Env) {
	p := e.Probe()
	url := e.Serve(Route{
		Method: "POST", Path: "/pay",
		Lock: httplock.Config{Locker: e.Locker()}, Key: KeySource{Kind: FromQuery, Name: "order"},
		Handler: p.BlockUser("alice"),
	})
	finish := e.Hold(p, "POST", url+"/pay?order=1", UserHeader, "alice")
	expect(e, e.Send("POST", url+"/pay?order=1", UserHeader, "bob"), http.StatusConflict, "locked")
	expect(e, e.Send("POST", url+"/pay?order=1&order=2", UserHeader, "bob"), http.StatusBadRequest, "key_invalid")
	expectOK(e, e.Send("POST", url+"/pay?order=2", UserHeader, "bob"))
	finish()
}

func idempotencyKey(e *Env) {
	p := e.Probe()
	url := e.Serve(Route{
		Method: "POST", Path: "/payments",
		Lock: httplock.Config{Locker: e.Locker()}, Key: KeySource{Kind: FromIdempotencyKey},
		Handler: p.BlockUser("alice"),
	})
	const ik = httplock.HeaderIdempotencyKey
	finish := e.Hold(p, "POST", url+"/payments", UserHeader, "alice", ik, `"k-1"`)
	expect(e, e.Send("POST", url+"/payments", UserHeader, "bob", ik, `"k-1"`), http.StatusConflict, "locked")
	// Unquoted, as plain clients send it: the same key.
	expect(e, e.Send("POST", url+"/payments", UserHeader, "bob", ik, `k-1`), http.StatusConflict, "locked")
	expect(e, e.Send("POST", url+"/payments", UserHeader, "bob", ik, `k-1,k-2`), http.StatusBadRequest, "key_invalid")
	expect(e, e.Send("POST", url+"/payments", UserHeader, "bob", ik, `"k-1"`, ik, `"k-2"`), http.StatusBadRequest, "key_invalid")
	expectOK(e, e.Send("POST", url+"/payments", UserHeader, "bob", ik, `"k-2"`))
	finish()
}

func keyTooLong(e *Env) {
	p := e.Probe()
	url := e.Serve(Route{
		Method: "POST", Path: "/orders",
		Lock: httplock.Config{Locker: e.Locker()}, Key: KeySource{Kind: FromHeader, Name: "X-Key"},
		Handler: p.Sleep(0),
	})
	expect(e, e.Send("POST", url+"/orders", "X-Key", strings.Repeat("k", httplock.MaxKeyLen+1)), http.StatusBadRequest, "key_too_long")
	expectOK(e, e.Send("POST", url+"/orders", "X-Key", strings.Repeat("k", httplock.MaxKeyLen)))
	if calls, _ := p.Stats(); calls != 1 {
		e.T.Fatalf("handler ran %d times, want 1", calls)
	}
}

func noKeyRunsUnlocked(e *Env) {
	p := e.Probe()
	url := e.Serve(Route{
		Method: "POST", Path: "/orders",
		Lock: httplock.Config{Locker: e.Locker()}, Key: KeySource{Kind: FromHeader, Name: "X-Key"},
		Handler: p.BlockUser("alice"),
	})
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	expectOK(e, e.Send("POST", url+"/orders", UserHeader, "bob"))
	finish()
}

// A required key the client did not send is the client's to fix (400); one
// the server's context lacks is the server's (500).
func keyRequired(e *Env) {
	p := e.Probe()
	var logs LogBuffer // the 500's error line, kept out of the test's output
	cfg := httplock.Config{Locker: e.Locker(), KeyRequired: true, Logger: logs.Logger()}
	url := e.Serve(
		Route{Method: "POST", Path: "/orders", Lock: cfg, Key: KeySource{Kind: FromHeader, Name: "X-Key"}, Handler: p.Sleep(0)},
		userRoute("POST", "/mine", cfg, p.Sleep(0)),
	)
	expect(e, e.Send("POST", url+"/orders", UserHeader, "alice"), http.StatusBadRequest, "key_missing")
	expectOK(e, e.Send("POST", url+"/orders", "X-Key", "k"))
	expect(e, e.Send("POST", url+"/mine"), http.StatusInternalServerError, "key_misconfigured")
	expectOK(e, e.Send("POST", url+"/mine", UserHeader, "alice"))
	if calls, _ := p.Stats(); calls != 2 {
		e.T.Fatalf("handlers ran %d times, want 2", calls)
	}
}

func waitGivesUp(e *Env) {
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker(), Mode: httplock.Wait, MaxWait: 300 * time.Millisecond}
	url := e.Serve(userRoute("POST", "/orders", cfg, p.Block))
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	r := e.Send("POST", url+"/orders", UserHeader, "alice")
	expect(e, r, http.StatusConflict, "locked")
	if r.Elapsed < 300*time.Millisecond {
		e.T.Errorf("gave up after %v, before MaxWait", r.Elapsed)
	}
	finish()
}

func tooManyWaiters(e *Env) {
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker(), Mode: httplock.Wait, MaxWait: 20 * time.Second, MaxWaiters: 2}
	url := e.Serve(userRoute("POST", "/orders", cfg, p.Block))
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	ch := fanOut(e, 10, "POST", url+"/orders", UserHeader, "alice")
	for _, r := range collect(e, ch, 8) { // two wait; they answer once released
		expect(e, r, http.StatusTooManyRequests, "too_many_waiters")
	}
	finish()
	for _, r := range collect(e, ch, 2) {
		expectOK(e, r)
	}
	if calls, maxIn := p.Stats(); calls != 3 || maxIn != 1 {
		e.T.Fatalf("calls %d, most at once %d; want 3 and 1", calls, maxIn)
	}
}

func retryAfterCapped(e *Env) {
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker(core.WithTTL(1500 * time.Millisecond)), RetryAfter: 30 * time.Second}
	url := e.Serve(userRoute("POST", "/orders", cfg, p.Block))
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	r := e.Send("POST", url+"/orders", UserHeader, "alice")
	if ra := r.Header.Get(httplock.HeaderRetryAfter); r.Status != http.StatusConflict || (ra != "1" && ra != "2") {
		e.T.Fatalf("got %d with Retry-After %q; want 409 with at most the 1.5s lease, rounded up", r.Status, ra)
	}
	finish()
}

func lockOnContext(e *Env) {
	want := httplock.LockKey("ctx", "alice")
	url := e.Serve(userRoute("POST", "/orders", httplock.Config{Locker: e.Locker(), Scope: "ctx"},
		func(w http.ResponseWriter, r *http.Request) {
			if lk, ok := core.FromContext(r.Context()); !ok || lk.Key() != want {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}))
	expectOK(e, e.Send("POST", url+"/orders", UserHeader, "alice"))
}

func lockLost(e *Env) {
	p := e.Probe()
	l := e.Locker(core.WithTTL(300 * time.Millisecond))
	causes := make(chan error, 1)
	url := e.Serve(userRoute("POST", "/orders", httplock.Config{Locker: l, Scope: "lost"},
		func(w http.ResponseWriter, r *http.Request) {
			defer p.enter(r)()
			select {
			case <-r.Context().Done():
				causes <- context.Cause(r.Context())
			case <-time.After(10 * time.Second):
				causes <- errors.New("context not cancelled within 10s")
			}
		}))
	held := e.Async("POST", url+"/orders", UserHeader, "alice")
	p.Entered(e.T)
	skey, _ := l.StoreKey(httplock.LockKey("lost", "alice"))
	e.Backend.Vanish(skey)
	if err := <-causes; !errors.Is(err, core.ErrLockLost) {
		e.T.Fatalf("handler's context cause %v, want core.ErrLockLost", err)
	}
	expectOK(e, <-held)
}

func panicReleases(e *Env) {
	url := e.Serve(userRoute("POST", "/orders", httplock.Config{Locker: e.Locker()},
		func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Panic") != "" {
				panic("boom")
			}
		}))
	if r := e.Send("POST", url+"/orders", UserHeader, "alice", "X-Panic", "1"); r.Status != http.StatusInternalServerError {
		e.T.Fatalf("panicking handler: got %d %v, want the recovery's 500", r.Status, r.Err)
	}
	expectOK(e, e.Send("POST", url+"/orders", UserHeader, "alice"))
}

func clientGone(e *Env) {
	p := e.Probe()
	l := e.Locker()
	cfg := httplock.Config{Locker: l, Mode: httplock.Wait, MaxWait: 30 * time.Second, Scope: "gone"}
	url := e.Serve(userRoute("POST", "/orders", cfg, p.Block))
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")

	ctx, cancel := context.WithCancel(context.Background())
	waiter := make(chan Result, 1)
	go func() { waiter <- e.Do(ctx, "POST", url+"/orders", UserHeader, "alice") }()
	time.Sleep(300 * time.Millisecond) // let it reach the wait
	cancel()
	if r := <-waiter; r.Err == nil {
		e.T.Fatalf("cancelled request answered %d", r.Status)
	}
	time.Sleep(300 * time.Millisecond) // let the server see the disconnect
	finish()
	time.Sleep(100 * time.Millisecond)
	if n := p.Calls("alice"); n != 1 {
		e.T.Fatalf("handler ran %d times; the disconnected waiter must not run", n)
	}
	Eventually(e.T, "the lock is free", func() bool {
		lk, err := l.TryObtain(context.Background(), httplock.LockKey("gone", "alice"))
		if err != nil {
			return false
		}
		_ = lk.Release(context.Background())
		return true
	})
}

// storeRoutes is a Reject and a Wait route with a short store timeout.
func storeRoutes(e *Env, p *Probe, mod func(*httplock.Config)) string {
	r := httplock.Config{Locker: e.OutageLocker(), StoreTimeout: 250 * time.Millisecond}
	mod(&r)
	w := r
	w.Mode, w.MaxWait = httplock.Wait, 30*time.Second
	return e.Serve(userRoute("POST", "/reject", r, p.Sleep(0)), userRoute("POST", "/wait", w, p.Sleep(0)))
}

// A deadline on the request's context (a timeout middleware's, not a
// client that left) that ends the wait gets the 409 that MaxWait would have
// given; taken for a departed client it got no answer, which net/http sends
// as an empty 200.
func deadlineWhileWaiting(e *Env) {
	p := e.Probe()
	cfg := httplock.Config{Locker: e.Locker(), Mode: httplock.Wait, MaxWait: 30 * time.Second}
	url := e.Serve(userRoute("POST", "/orders", cfg, p.Block))
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	r := e.Send("POST", url+"/orders", UserHeader, "alice", DeadlineHeader, "300ms")
	expect(e, r, http.StatusConflict, "locked")
	finish()
	if n := p.Calls("alice"); n != 1 {
		e.T.Fatalf("handler ran %d times, want once", n)
	}
}

// A deadline that ends while the store does not answer gets the 503 that
// StoreTimeout would have given.
func deadlineWhileStoreHangs(e *Env) {
	if e.Backend.Hang == nil {
		e.T.Skip("this store cannot hang")
	}
	p := e.Probe()
	url := storeRoutes(e, p, func(c *httplock.Config) { c.StoreTimeout = 5 * time.Second })
	e.Backend.Hang()
	for _, path := range []string{"/reject", "/wait"} {
		r := e.Send("POST", url+path, UserHeader, "alice", DeadlineHeader, "300ms")
		expect(e, r, http.StatusServiceUnavailable, "lock_unavailable")
	}
	if calls, _ := p.Stats(); calls != 0 {
		e.T.Fatalf("handler ran %d times with the store hung", calls)
	}
}

func storeDown(e *Env) {
	if e.Backend.Down == nil {
		e.T.Skip("this store cannot go down")
	}
	p := e.Probe()
	url := storeRoutes(e, p, func(*httplock.Config) {})
	e.Backend.Down()
	for _, path := range []string{"/reject", "/wait"} {
		r := e.Send("POST", url+path, UserHeader, "alice")
		expect(e, r, http.StatusServiceUnavailable, "lock_unavailable")
		if r.Elapsed > 5*time.Second {
			e.T.Errorf("%s: 503 after %v", path, r.Elapsed)
		}
	}
	if calls, _ := p.Stats(); calls != 0 {
		e.T.Fatalf("handler ran %d times with the store down", calls)
	}
}

func storeHangs(e *Env) {
	if e.Backend.Hang == nil {
		e.T.Skip("this store cannot hang")
	}
	p := e.Probe()
	url := storeRoutes(e, p, func(*httplock.Config) {})
	e.Backend.Hang()
	for _, path := range []string{"/reject", "/wait"} {
		r := e.Send("POST", url+path, UserHeader, "alice")
		expect(e, r, http.StatusServiceUnavailable, "lock_unavailable")
		if r.Elapsed > 5*time.Second {
			e.T.Errorf("%s: 503 after %v; StoreTimeout is 250ms", path, r.Elapsed)
		}
	}
}

func storeHangsWhileWaiting(e *Env) {
	if e.Backend.Hang == nil {
		e.T.Skip("this store cannot hang")
	}
	p := e.Probe()
	cfg := httplock.Config{Locker: e.OutageLocker(), Mode: httplock.Wait, MaxWait: 30 * time.Second, StoreTimeout: 300 * time.Millisecond}
	url := e.Serve(userRoute("POST", "/orders", cfg, p.Block))
	finish := e.Hold(p, "POST", url+"/orders", UserHeader, "alice")
	waiter := e.Async("POST", url+"/orders", UserHeader, "alice")
	time.Sleep(200 * time.Millisecond) // let it start waiting
	e.Backend.Hang()
	r := <-waiter
	expect(e, r, http.StatusServiceUnavailable, "lock_unavailable")
	if r.Elapsed > 10*time.Second {
		e.T.Errorf("503 after %v; MaxWait is 30s, StoreTimeout 300ms", r.Elapsed)
	}
	finish()
}

func failOpen(e *Env) {
	if e.Backend.Down == nil {
		e.T.Skip("this store cannot go down")
	}
	p := e.Probe()
	var logs LogBuffer
	url := storeRoutes(e, p, func(c *httplock.Config) { c.FailOpen, c.Logger = true, logs.Logger() })
	e.Backend.Down()
	for range 5 {
		expectOK(e, e.Send("POST", url+"/reject", UserHeader, "alice"))
		expectOK(e, e.Send("POST", url+"/wait", UserHeader, "alice"))
	}
	if calls, _ := p.Stats(); calls != 10 {
		e.T.Fatalf("handler ran %d times, want 10", calls)
	}
	// Two routes, two middlewares, one logger: one warning for the burst.
	if n := logs.Count("fail-open"); n != 1 {
		e.T.Fatalf("%d fail-open warnings, want one for the burst", n)
	}
}
