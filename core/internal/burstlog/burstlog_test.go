package burstlog_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/internal/burstlog"
)

// lines is a logger's output, read while it is written to.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Collect(strings.Lines(l.buf.String()))
}

func newLogger() (*slog.Logger, *lines) {
	out := new(lines)
	return slog.New(slog.NewTextHandler(out, nil)), out
}

// waitLines waits until out has n lines, and fails if it gets more.
func waitLines(t *testing.T, out *lines, n int, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	for len(out.all()) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := out.all()
	if len(got) != n {
		t.Fatalf("%d lines, want %d:\n%s", len(got), n, strings.Join(got, ""))
	}
	return got
}

// A burst of 41 like warnings, as during a store restart: the first is
// logged at once, the other 40 as one line at the end of the quiet, with
// their count and the last one's attributes; nothing more while nothing
// more comes, and the next one after that is logged at once.
func TestBurstIsOneLineWithACount(t *testing.T) {
	const quiet = 200 * time.Millisecond
	lg, out := newLogger()
	b := &burstlog.Log{Quiet: quiet}
	for i := range 41 {
		b.Log(lg, slog.LevelWarn, "store gave up", "cancel_acquire", "n", i, "error", errors.New("refused"))
	}
	got := out.all()
	if len(got) != 1 || !strings.Contains(got[0], "level=WARN") || !strings.Contains(got[0], "n=0 ") ||
		!strings.Contains(got[0], burstlog.AttrSuppressed+"=0") {
		t.Fatalf("at once: %q, want the first line alone, with its count 0", got)
	}
	got = waitLines(t, out, 2, 10*quiet)
	if !strings.Contains(got[1], `msg="store gave up"`) || !strings.Contains(got[1], "n=40 ") ||
		!strings.Contains(got[1], burstlog.AttrSuppressed+"=40") {
		t.Fatalf("at the end of the quiet: %q, want one line counting the 40 left out, with the last one's attributes", got[1])
	}
	time.Sleep(3 * quiet)
	waitLines(t, out, 2, 0)
	b.Log(lg, slog.LevelWarn, "store gave up", "cancel_acquire", "n", 41)
	got = waitLines(t, out, 3, 0)
	if !strings.Contains(got[2], burstlog.AttrSuppressed+"=0") {
		t.Fatalf("after the quiet: %q, want logged at once, with nothing left out", got[2])
	}
}

// A burst that goes on is one line per quiet period, each with its count.
func TestLongBurstIsOneLinePerQuiet(t *testing.T) {
	const quiet = 100 * time.Millisecond
	lg, out := newLogger()
	b := &burstlog.Log{Quiet: quiet}
	start := time.Now()
	sent := 0
	for time.Since(start) < 5*quiet/2 {
		b.Log(lg, slog.LevelWarn, "down", nil)
		sent++
		time.Sleep(quiet / 20)
	}
	time.Sleep(2 * quiet)
	got := out.all()
	// 2.5 quiets of warnings, then the count of the last ones: 3 or 4 lines
	// however the ticks fall, never one per warning.
	if len(got) < 3 || len(got) > 4 {
		t.Fatalf("%d lines for %d warnings over %v with a quiet of %v:\n%s", len(got), sent, 5*quiet/2, quiet, strings.Join(got, ""))
	}
	counted := 1
	for _, l := range got[1:] {
		var n int
		if _, err := fmt.Sscanf(l[strings.Index(l, burstlog.AttrSuppressed+"="):], burstlog.AttrSuppressed+"=%d", &n); err != nil || n == 0 {
			t.Fatalf("line %q counts nothing", l)
		}
		counted += n
	}
	if counted != sent {
		t.Fatalf("the lines account for %d warnings, %d were sent:\n%s", counted, sent, strings.Join(got, ""))
	}
}

// Two topics, two messages or two loggers are bursts of their own.
func TestBurstsAreApart(t *testing.T) {
	lg, out := newLogger()
	lg2, out2 := newLogger()
	b := &burstlog.Log{Quiet: time.Hour}
	for range 3 {
		b.Log(lg, slog.LevelWarn, "down", "redis-a")
		b.Log(lg, slog.LevelWarn, "down", "redis-b")
		b.Log(lg, slog.LevelWarn, "lost", "redis-a")
		b.Log(lg2, slog.LevelWarn, "down", "redis-a")
	}
	if n := len(out.all()); n != 3 {
		t.Fatalf("%d lines on the first logger, want 3 (one per message and topic):\n%s", n, strings.Join(out.all(), ""))
	}
	if n := len(out2.all()); n != 1 {
		t.Fatalf("%d lines on the second logger, want 1", n)
	}
}
