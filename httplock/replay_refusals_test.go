package httplock_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// A record this version cannot read (here: not a response at all) is
// answered 500 record_unreadable, logged, and nothing runs or is written.
func TestReplayRecordUnreadable(t *testing.T) {
	var logs httpcases.LogBuffer
	l := core.NewLocker(memorystore.New(), core.WithLogger(httpcases.Quiet))
	e, err := httplock.NewEngine(httplock.Config{Locker: l, Replay: &httplock.ReplayConfig{}, Logger: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	lk, err := l.TryObtain(context.Background(), httplock.LockKey("s", "k"))
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.ReleaseRecording(context.Background(), []byte("not a response"), time.Minute); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	ran := false
	replayed, rej := e.ServeResponse(w, httptest.NewRequest("POST", "/", nil), "s", "k", nil, func(context.Context, http.ResponseWriter) error {
		ran = true
		return nil
	})
	if replayed || ran || rej == nil || rej.Status != http.StatusInternalServerError ||
		!errors.Is(rej, httplock.ErrRecordUnreadable) || rej.Problem.Code != "record_unreadable" {
		t.Fatalf("replayed %v, ran %v, rejection %v; want 500 record_unreadable and nothing run", replayed, ran, rej)
	}
	if w.Body.Len() != 0 || len(w.Header()) != 0 {
		t.Fatalf("the engine wrote %v %q; the rejection is the adapter's to answer", w.Header(), w.Body)
	}
	if logs.Count("cannot be read") != 1 {
		t.Fatalf("log %q; want the unreadable record logged", logs.String())
	}
}

// Serve and ServeRequest have no writer, so an engine with Replay answers
// them 500 (ErrInvalidConfig) rather than run without recording.
func TestReplayNeedsServeResponse(t *testing.T) {
	l := core.NewLocker(memorystore.New(), core.WithLogger(httpcases.Quiet))
	e, err := httplock.NewEngine(httplock.Config{Locker: l, Replay: &httplock.ReplayConfig{}, Logger: httpcases.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	for name, rej := range map[string]*httplock.Rejection{
		"Serve":        e.Serve(context.Background(), "s", "k", nil, func(context.Context) { ran = true }),
		"ServeRequest": e.ServeRequest(httptest.NewRequest("POST", "/", nil), "s", "k", nil, func(context.Context) { ran = true }),
	} {
		if ran || rej == nil || rej.Status != http.StatusInternalServerError || !errors.Is(rej, httplock.ErrInvalidConfig) {
			t.Errorf("%s: ran %v, rejection %v; want 500 ErrInvalidConfig and nothing run", name, ran, rej)
		}
	}
	// The key was never taken.
	lk, err := l.TryObtain(context.Background(), httplock.LockKey("s", "k"))
	if err != nil {
		t.Fatalf("the key is held after the refusals: %v", err)
	}
	_ = lk.Release(context.Background())
}
