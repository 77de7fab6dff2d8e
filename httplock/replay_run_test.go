package httplock_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// unitEngine is an engine with Replay on a memory store that runs handlers
// in units (memorystore.WithUnits), as pgstore.WithTx does in its
// transaction.
func unitEngine(t *testing.T, rc httplock.ReplayConfig) (*httplock.Engine, *memorystore.Store, *core.Locker) {
	t.Helper()
	s := memorystore.New().WithUnits()
	l := core.NewLocker(s, core.WithLogger(httpcases.Quiet))
	e, err := httplock.NewEngine(httplock.Config{Locker: l, Replay: &rc, Logger: httpcases.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	return e, s, l
}

// serveUnit sends one POST for key through e to h, and returns what the
// client got: the recorder, after the rejection, if any, was answered.
func serveUnit(e *httplock.Engine, key string, h func(w http.ResponseWriter)) (*httptest.ResponseRecorder, bool, *httplock.Rejection) {
	w := httptest.NewRecorder()
	w.Header().Set("X-Outer", "kept") // an outer middleware's
	r := httptest.NewRequest("POST", "/pay", nil)
	replayed, rej := e.ServeResponse(w, r, "s", key, nil, func(_ context.Context, w http.ResponseWriter) error {
		h(w)
		return nil
	})
	if rej != nil {
		httplock.WriteProblem(w, r, rej)
	}
	return w, replayed, rej
}

// In the store's unit, nothing of the response goes out before the commit,
// flushed or not; then all of it does, as the handler wrote it, and the
// retry gets it replayed.
func TestReplayInUnitHoldsResponseUntilCommit(t *testing.T) {
	e, _, _ := unitEngine(t, httplock.ReplayConfig{})
	var out *httptest.ResponseRecorder
	out, _, rej := serveUnit(e, "k", func(w http.ResponseWriter) {
		if w.Header().Get("X-Outer") != "kept" {
			t.Error("the handler does not see the outer middleware's header")
		}
		w.Header().Set("Location", "/payments/1")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("paid"))
		_ = http.NewResponseController(w).Flush()
		if out != nil && (out.Code != http.StatusOK || out.Flushed || out.Body.Len() != 0) {
			t.Error("part of the response went out before the commit")
		}
	})
	if rej != nil || out.Code != http.StatusCreated || out.Body.String() != "paid" ||
		out.Header().Get("Location") != "/payments/1" || out.Header().Get("X-Outer") != "kept" {
		t.Fatalf("got %d %v %q, %v; want the handler's 201 after the commit", out.Code, out.Header(), out.Body, rej)
	}
	again, replayed, rej := serveUnit(e, "k", func(http.ResponseWriter) { t.Error("the handler ran again") })
	if !replayed || rej != nil || again.Code != http.StatusCreated || again.Body.String() != "paid" {
		t.Fatalf("retry: %d %q, replayed %v, %v; want the replay", again.Code, again.Body, replayed, rej)
	}
}

// What cannot be committed does not go out: a lock lost before the commit
// is 503 not_committed (a retry runs, or replays what landed), a response
// too long to record is 500 not_committed, and in both the handler's own
// headers stay out of the answer. A failure the handler answered (a 5xx)
// goes out as it is, rolled back and not recorded.
func TestReplayInUnitNotCommitted(t *testing.T) {
	e, s, l := unitEngine(t, httplock.ReplayConfig{MaxResponseBody: 8})
	skey, _ := l.StoreKey(httplock.LockKey("s", "lost"))
	w, _, rej := serveUnit(e, "lost", func(w http.ResponseWriter) {
		w.Header().Set("Set-Cookie", "session=1")
		_, _ = w.Write([]byte("paid"))
		s.Delete(skey) // the lease is gone before the commit
	})
	if !errors.Is(rej, httplock.ErrNotCommitted) || w.Code != http.StatusServiceUnavailable ||
		rej.Problem.Code != "not_committed" || w.Header().Get(httplock.HeaderRetryAfter) == "" ||
		w.Header().Get("Set-Cookie") != "" || strings.Contains(w.Body.String(), "paid") {
		t.Fatalf("lock lost before the commit: %d %v %q, %v; want 503 not_committed and nothing of the handler's", w.Code, w.Header(), w.Body, rej)
	}

	w, _, rej = serveUnit(e, "long", func(w http.ResponseWriter) {
		w.Header().Set("Set-Cookie", "session=1")
		_, _ = w.Write([]byte("a body longer than eight bytes"))
	})
	if !errors.Is(rej, httplock.ErrNotCommitted) || w.Code != http.StatusInternalServerError ||
		w.Header().Get("Set-Cookie") != "" {
		t.Fatalf("a response too long to record: %d %v %q, %v; want 500 not_committed", w.Code, w.Header(), w.Body, rej)
	}

	w, _, rej = serveUnit(e, "down", func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("down"))
	})
	if rej != nil || w.Code != http.StatusBadGateway || w.Body.String() != "down" {
		t.Fatalf("a failure the handler answered: %d %q, %v; want it as it is", w.Code, w.Body, rej)
	}
	w, replayed, rej := serveUnit(e, "down", func(w http.ResponseWriter) { w.WriteHeader(http.StatusCreated) })
	if replayed || rej != nil || w.Code != http.StatusCreated {
		t.Fatalf("the retry of a failure: %d, replayed %v, %v; want a fresh run", w.Code, replayed, rej)
	}
}

// RefuseInDoubt needs a store that tells a run in doubt: one that keeps
// records but marks no runs is refused when the engine is built, as is a
// policy that is neither.
func TestReplayInDoubtConfig(t *testing.T) {
	m := memorystore.New()
	l := core.NewLocker(recordsOnly{m, m})
	_, err := httplock.NewEngine(httplock.Config{Locker: l, Replay: &httplock.ReplayConfig{InDoubt: core.RefuseInDoubt}})
	if !errors.Is(err, httplock.ErrInvalidConfig) || !errors.Is(err, core.ErrNoRunMarks) {
		t.Fatalf("RefuseInDoubt without run marks: %v; want ErrInvalidConfig and core.ErrNoRunMarks", err)
	}
	if _, err := httplock.NewEngine(httplock.Config{Locker: l, Replay: &httplock.ReplayConfig{}}); err != nil {
		t.Fatalf("RunAgain without run marks: %v", err)
	}
	_, err = httplock.NewEngine(httplock.Config{Locker: core.NewLocker(m), Replay: &httplock.ReplayConfig{InDoubt: 7}})
	if !errors.Is(err, httplock.ErrInvalidConfig) || !strings.Contains(err.Error(), "Replay.InDoubt") {
		t.Fatalf("an unknown policy: %v; want ErrInvalidConfig naming Replay.InDoubt", err)
	}
}

// recordsOnly is a store that keeps records but marks no runs.
type recordsOnly struct {
	core.Store
	store.Recorder
}
