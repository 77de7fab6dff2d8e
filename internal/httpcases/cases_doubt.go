package httpcases

import (
	"context"
	"net/http"
	"time"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// The in-doubt cases: two instances of one app on one store, the first
// paused inside its handler, after its effect (the Probe counts it as the
// handler is entered) and before its response is recorded, for longer
// than its lease, as a GC pause or a stopped VM would. Its watchdog is
// paused with it (no watchdog). The retry goes to the second instance,
// which waits for the key.

// doubtLease is the paused instance's lease.
const doubtLease = 300 * time.Millisecond

// doubtScope is the scope of the in-doubt cases' route, so that a case can
// name the key's lock (httplock.LockKey) to clear it.
const doubtScope = "pay"

// marksRuns skips a case on a store that cannot tell a run in doubt.
func marksRuns(e *Env) {
	keepsRecords(e)
	if !e.Locker().MarksRuns() {
		e.T.Skip("this store marks no runs")
	}
}

// twoInstances serves the replay route twice on the env's store, with
// policy: the first instance's Locker has the short lease and no watchdog,
// the second's waits for the key.
func twoInstances(e *Env, p *Probe, policy core.DoubtPolicy) (paused, other string) {
	cfg := func(l *core.Locker) httplock.Config {
		return httplock.Config{Locker: l, Scope: doubtScope, Mode: httplock.Wait, MaxWait: 15 * time.Second,
			Replay: &httplock.ReplayConfig{InDoubt: policy}}
	}
	paused = replayRoute(e, p, cfg(e.Locker(core.WithoutWatchdog(), core.WithTTL(doubtLease)))) + "/orders/1"
	other = replayRoute(e, p, cfg(e.Locker(core.WithRetry(backoff.Constant(20*time.Millisecond))))) + "/orders/1"
	return paused, other
}

// pausedFirst sends the first request to the paused instance and returns
// once its handler is in, with its effect made.
func pausedFirst(e *Env, p *Probe, url string) <-chan Result {
	first := make(chan Result, 1)
	go func() { first <- order(e, url, "alice", "pay-1", `{"amount":5}`, BlockHeader, "1") }()
	p.Entered(e.T)
	return first
}

// expectInDoubt checks the 409 in_doubt answer: a problem body with its
// own code, and no Retry-After, since retrying soon does not help.
func expectInDoubt(e *Env, r Result) {
	e.T.Helper()
	if r.Err != nil || r.Status != http.StatusConflict {
		e.T.Fatalf("want 409 in_doubt, got %d %v %s", r.Status, r.Err, r.Body)
	}
	if p := r.Problem(); p.Code != "in_doubt" || p.Status != http.StatusConflict {
		e.T.Fatalf("problem %+v, want code in_doubt", p)
	}
	if ra := r.Header.Get(httplock.HeaderRetryAfter); ra != "" {
		e.T.Errorf("Retry-After %q on in_doubt", ra)
	}
}

// With RefuseInDoubt the retry of a request whose instance paused past its
// lease after its effect is refused, 409 in_doubt, and so is every later
// one, whatever the paused instance does when it wakes: the effect is made
// once. An operator who settled the payment clears the key (ForgetRun, the
// "reqlock forget" command), and the key runs again.
func replayInDoubtRefused(e *Env) {
	marksRuns(e)
	p := e.Probe()
	paused, other := twoInstances(e, p, core.RefuseInDoubt)
	first := pausedFirst(e, p, paused)
	expectInDoubt(e, order(e, other, "alice", "pay-1", `{"amount":5}`))
	p.Release() // the paused instance wakes and answers its own client
	expectFresh(e, <-first, http.StatusCreated)
	expectInDoubt(e, order(e, other, "alice", "pay-1", `{"amount":5}`))
	expectInDoubt(e, order(e, paused, "alice", "pay-1", `{"amount":5}`))
	expectCalls(e, p, 1)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Locker().ForgetRun(ctx, httplock.LockKey(doubtScope, httplock.JoinKeys("alice", "pay-1"))); err != nil {
		e.T.Fatal(err)
	}
	again := order(e, other, "alice", "pay-1", `{"amount":5}`)
	expectFresh(e, again, http.StatusCreated)
	expectReplay(e, order(e, paused, "alice", "pay-1", `{"amount":5}`), again)
	expectCalls(e, p, 2)
}

// With RunAgain, the default, the same retry runs the handler again: at
// least once, stated (Outcome and log), never silent. Its response is the
// one recorded; the paused instance's, written after its lease, is not.
func replayInDoubtRunAgain(e *Env) {
	marksRuns(e)
	p := e.Probe()
	paused, other := twoInstances(e, p, core.RunAgain)
	first := pausedFirst(e, p, paused)
	retry := order(e, other, "alice", "pay-1", `{"amount":5}`)
	expectFresh(e, retry, http.StatusCreated)
	p.Release()
	expectFresh(e, <-first, http.StatusCreated)
	expectReplay(e, order(e, paused, "alice", "pay-1", `{"amount":5}`), retry)
	expectCalls(e, p, 2)
}

// A handler that answers a failure the retry may repair (a 503 from a
// payment API that was down) leaves nothing in doubt: the next request
// runs, refused by nothing.
func replayCleanFailureNotInDoubt(e *Env) {
	marksRuns(e)
	p := e.Probe()
	_, other := twoInstances(e, p, core.RefuseInDoubt)
	expectFresh(e, order(e, other, "alice", "pay-1", `{"amount":5}`, StatusHeader, "503"), http.StatusServiceUnavailable)
	first := order(e, other, "alice", "pay-1", `{"amount":5}`)
	expectFresh(e, first, http.StatusCreated)
	expectReplay(e, order(e, other, "alice", "pay-1", `{"amount":5}`), first)
	expectCalls(e, p, 2)
}
