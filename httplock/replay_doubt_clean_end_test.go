package httplock_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// A request run again over a run in doubt (RunAgain) whose handler
// answers a failure to retry (503) settled nothing: the lost run's outcome
// is as unknown as before, and an engine that refuses runs in doubt must
// still refuse the key, not run it as if nothing had happened.
func TestReplayCleanFailureAfterDoubtKeepsTheDoubt(t *testing.T) {
	s := memorystore.New()
	l := core.NewLocker(s, core.WithLogger(httpcases.Quiet))
	engine := func(p core.DoubtPolicy) *httplock.Engine {
		e, err := httplock.NewEngine(httplock.Config{Locker: l, Replay: &httplock.ReplayConfig{InDoubt: p}, Logger: httpcases.Quiet})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	again, refuse := engine(core.RunAgain), engine(core.RefuseInDoubt)
	serve := func(e *httplock.Engine, h func(w http.ResponseWriter)) (*httptest.ResponseRecorder, *httplock.Rejection) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/pay", nil)
		_, rej := e.ServeResponse(w, r, "s", "pay-1", nil, func(_ context.Context, w http.ResponseWriter) error {
			h(w)
			return nil
		})
		return w, rej
	}
	skey, _ := l.StoreKey(httplock.LockKey("s", "pay-1"))
	if _, rej := serve(again, func(w http.ResponseWriter) {
		s.Delete(skey) // paid, then the lock is lost before the record
		w.WriteHeader(http.StatusCreated)
	}); rej != nil {
		t.Fatalf("the lost run: %v", rej)
	}
	if w, rej := serve(again, func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }); rej != nil || w.Code != http.StatusServiceUnavailable {
		t.Fatalf("the run again: %d, %v; want the handler's 503", w.Code, rej)
	}
	ran := false
	w, rej := serve(refuse, func(w http.ResponseWriter) { ran = true; w.WriteHeader(http.StatusCreated) })
	if rej == nil || !errors.Is(rej, httplock.ErrInDoubt) || ran {
		t.Fatalf("a refusing request after a lost run and a failed run again: %d, %v, ran %v; want 409 in_doubt", w.Code, rej, ran)
	}
}
