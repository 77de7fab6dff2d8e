package httplock_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// recordedEngine is an engine on a fresh memory store, with replay as
// given.
func recordedEngine(t *testing.T, replay *httplock.ReplayConfig) *httplock.Engine {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	e, err := httplock.NewEngine(httplock.Config{
		Locker: core.NewLocker(memorystore.New(), core.WithLogger(quiet)),
		Replay: replay, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestServeRecordedReplays(t *testing.T) {
	e := recordedEngine(t, &httplock.ReplayConfig{MaxResponseBody: 8})
	ctx := t.Context()
	const scope = "/pkg.Orders/Create"
	runs := 0
	call := func(key, fp string, out []byte, err error) ([]byte, bool, *httplock.Rejection) {
		return e.ServeRecorded(ctx, scope, key, nil, []byte(fp), func(ctx context.Context) ([]byte, error) {
			runs++
			if _, ok := core.FromContext(ctx); !ok && key != "" {
				t.Error("run's context carries no lock")
			}
			return out, err
		})
	}
	cases := []struct {
		name      string
		key, fp   string
		out       []byte
		err       error
		wantRuns  int
		wantRec   string
		replayed  bool
		rejection error
	}{
		{name: "first call runs", key: "a", fp: "f1", out: []byte("order-1"), wantRuns: 1},
		{name: "a retry gets the record", key: "a", fp: "f1", wantRec: "order-1", replayed: true},
		{name: "another request with the key", key: "a", fp: "f2", rejection: httplock.ErrReplayMismatch},
		{name: "a failed run", key: "b", fp: "f1", err: errors.New("handler failed"), wantRuns: 1},
		{name: "is not recorded", key: "b", fp: "f1", out: []byte{}, wantRuns: 1},
		{name: "an empty answer is one", key: "b", fp: "f1", wantRec: "", replayed: true},
		{name: "an answer over the bound", key: "c", fp: "f1", out: []byte("123456789"), wantRuns: 1},
		{name: "is not recorded either", key: "c", fp: "f1", out: []byte("x"), wantRuns: 1},
		{name: "no fingerprint", key: "d", rejection: httplock.ErrInvalidConfig},
		{name: "no key runs unrecorded", key: "", fp: "f1", out: []byte("x"), wantRuns: 1},
	}
	for _, c := range cases {
		before := runs
		rec, replayed, rej := call(c.key, c.fp, c.out, c.err)
		switch {
		case c.rejection != nil && !errors.Is(rej, c.rejection):
			t.Fatalf("%s: rejection %v, want %v", c.name, rej, c.rejection)
		case c.rejection == nil && rej != nil:
			t.Fatalf("%s: rejected: %v", c.name, rej)
		case replayed != c.replayed || string(rec) != c.wantRec:
			t.Fatalf("%s: record %q, replayed %v; want %q, %v", c.name, rec, replayed, c.wantRec, c.replayed)
		case runs-before != c.wantRuns:
			t.Fatalf("%s: run ran %d times, want %d", c.name, runs-before, c.wantRuns)
		}
	}
}

func TestServeRecordedWithoutReplay(t *testing.T) {
	e := recordedEngine(t, nil)
	runs := 0
	for range 2 {
		rec, replayed, rej := e.ServeRecorded(t.Context(), "/pkg.Orders/Create", "a", nil, nil, func(context.Context) ([]byte, error) {
			runs++
			return []byte("order"), nil
		})
		if rec != nil || replayed || rej != nil {
			t.Fatalf("without Replay: record %q, replayed %v, rejection %v; want the run alone", rec, replayed, rej)
		}
	}
	if runs != 2 {
		t.Fatalf("run ran %d times, want 2: without Replay nothing is recorded", runs)
	}
}
