package httplock

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// startUpLog builds middlewares with replay on locker and returns what they
// logged once their start-up checks are over.
func startUpLog(t *testing.T, locker *core.Locker, middlewares int) string {
	t.Helper()
	var mu sync.Mutex
	var buf bytes.Buffer
	lg := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	for range middlewares {
		e, err := NewEngine(Config{Locker: locker, Replay: &ReplayConfig{}, Logger: lg})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-e.durabilityChecked:
		case <-time.After(10 * time.Second):
			t.Fatal("the durability check did not end")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return buf.String()
}

// A Redis without AOF or RDB snapshots (as the test helper starts them)
// loses every record when it restarts: a middleware with replay says so
// once, however many routes share the Locker.
func TestReplayWarnsOfRecordsLostOnRestart(t *testing.T) {
	srv := redistest.Start(t)
	locker := core.NewLocker(redisstore.New(srv.Client(t)))
	if _, _, err := locker.RecordsDurable(context.Background()); err != nil {
		t.Fatalf("the Redis store's durability cannot be asked through the Locker: %v", err)
	}
	logs := startUpLog(t, locker, 3)
	if n := strings.Count(logs, "level=WARN"); n != 1 || !strings.Contains(logs, "reqlock.reason="+reasonRecordsNotDurable) ||
		!strings.Contains(logs, "appendonly no") {
		t.Fatalf("want one warning that records do not survive a restart, got:\n%s", logs)
	}
}

// With AOF on, records survive a restart: nothing to say.
func TestReplayQuietWithAppendOnly(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes")
	logs := startUpLog(t, core.NewLocker(redisstore.New(srv.Client(t))), 1)
	if logs != "" {
		t.Fatalf("want no warning with appendonly yes, got:\n%s", logs)
	}
}

// A Redis whose CONFIG is renamed away (as managed services do) cannot be
// asked: the middleware says it could not check, once.
func TestReplayWarnsWhenDurabilityUnknown(t *testing.T) {
	srv := redistest.Start(t, "--rename-command", "CONFIG", "")
	logs := startUpLog(t, core.NewLocker(redisstore.New(srv.Client(t))), 2)
	if n := strings.Count(logs, "level=WARN"); n != 1 || !strings.Contains(logs, "reqlock.reason="+reasonDurabilityUnknown) {
		t.Fatalf("want one warning that durability could not be checked, got:\n%s", logs)
	}
}

// Without replay there are no records, and nothing to ask.
func TestNoDurabilityCheckWithoutReplay(t *testing.T) {
	srv := redistest.Start(t)
	var buf bytes.Buffer
	e, err := NewEngine(Config{Locker: core.NewLocker(redisstore.New(srv.Client(t))), Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	<-e.durabilityChecked // closed at once
	if buf.Len() != 0 {
		t.Fatalf("logged without replay:\n%s", buf.String())
	}
}

// A store that cannot tell (the memory store) is not asked, and nothing is
// said.
func TestReplayQuietWhenStoreCannotTell(t *testing.T) {
	logs := startUpLog(t, core.NewLocker(memorystore.New()), 1)
	if logs != "" {
		t.Fatalf("want no warning from a store that cannot tell, got:\n%s", logs)
	}
}
