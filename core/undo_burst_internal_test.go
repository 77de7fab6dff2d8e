package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/internal/burstlog"
	"github.com/reqlock/reqlock/redisstore"
)

// syncBuffer is a log's output, read while it is written to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for l := range strings.Lines(b.buf.String()) {
		out = append(out, l)
	}
	return out
}

// A store that refuses every connection makes each failed acquire's
// background cancel give up at the end of its lease: 41 of them, as in a
// restart of the store under load, are one warning at once and one line
// with the count of the rest, not 41 lines.
func TestUndoGivingUpIsOneLinePerBurst(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: every dial is refused
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true, DialerRetries: 1, DialerRetryTimeout: time.Millisecond})
	t.Cleanup(func() { c.Close() })

	out := new(syncBuffer)
	l := NewLocker(redisstore.New(c), WithTTL(time.Second), WithLogger(slog.New(slog.NewTextHandler(out, nil))))
	const quiet = 3 * time.Second
	l.warnings.Quiet = quiet

	const failures = 41
	ctx := context.Background()
	start := time.Now()
	for i := range failures {
		if _, err := l.TryObtain(ctx, fmt.Sprint("k", i)); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("TryObtain on a store that refuses connections: %v", err)
		}
	}
	if took := time.Since(start); took > l.ttl/2 {
		// An undo that starts after its lease has nothing to undo, and
		// says nothing.
		t.Fatalf("%d refused acquires took %v: too slow for each to leave an undo to give up", failures, took)
	}
	// Every cancel gives up a lease (1 s) after its acquire; the count
	// comes at the end of the quiet that the first warning began.
	counted := func() (lines, n int) {
		for _, line := range out.lines() {
			if !strings.Contains(line, `msg="reqlock: background undo gave up"`) {
				t.Fatalf("an unexpected line: %s", line)
			}
			if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "reqlock.reason=cancel_acquire") ||
				!strings.Contains(line, "connection refused") {
				t.Fatalf("the warning does not say what gave up and why: %s", line)
			}
			var k int
			i := strings.Index(line, burstlog.AttrSuppressed+"=")
			if _, err := fmt.Sscanf(line[i:], burstlog.AttrSuppressed+"=%d", &k); err != nil {
				t.Fatalf("no count in %s", line)
			}
			lines, n = lines+1, n+1+k
			if k > 0 {
				n-- // a count line stands for the ones it counts, not itself
			}
		}
		return lines, n
	}
	deadline := time.Now().Add(3*quiet + 5*time.Second)
	for {
		lines, n := counted()
		if n == failures {
			// The burst fits in one quiet unless the machine is very slow:
			// then one more count line.
			if lines > 3 {
				t.Fatalf("%d lines for one burst of %d:\n%s", lines, failures, strings.Join(out.lines(), ""))
			}
			return
		}
		if n > failures || time.Now().After(deadline) {
			t.Fatalf("the lines account for %d undos that gave up, want %d:\n%s", n, failures, strings.Join(out.lines(), ""))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
