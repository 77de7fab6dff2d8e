package httplock

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// A route that requires a context key nobody set fails every request, so
// its error is logged every burst, not once: after burstQuiet the next
// request logs again and counts the ones left out.
func TestMissingContextKeyLoggedEachBurst(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	lg := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	type sessionKey struct{}
	lock := New(Config{Locker: core.NewLocker(memorystore.New()), Key: FromContext(sessionKey{}), KeyRequired: true, Logger: lg, Scope: "sessions"})
	srv := httptest.NewServer(lock(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("handler ran without its key")
	})))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()
	send := func() {
		t.Helper()
		res, err := srv.Client().Post(srv.URL, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusInternalServerError {
			t.Fatalf("status %d, want 500", res.StatusCode)
		}
	}
	errorLines := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for l := range strings.Lines(buf.String()) {
			if strings.Contains(l, "level=ERROR") {
				out = append(out, l)
			}
		}
		return out
	}

	for range 3 {
		send()
	}
	if n := len(errorLines()); n != 1 {
		t.Fatalf("%d error lines for a burst of 3, want 1:\n%s", n, buf.String())
	}
	// The burst ends: as if burstQuiet had gone by.
	bursts.Range(func(k, v any) bool {
		if k.(burstKey).lg == lg {
			b := v.(*burstLog)
			b.mu.Lock()
			b.last = b.last.Add(-burstQuiet - time.Second)
			b.mu.Unlock()
		}
		return true
	})
	send()
	lines := errorLines()
	if len(lines) != 2 || !strings.Contains(lines[1], "suppressed_since_last=2") || !strings.Contains(lines[1], "reason=no_context_value") {
		t.Fatalf("after the quiet: %q, want a second error line counting 2 left out", lines)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
