package rpccases

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Gate holds the calls that enter it until it is opened, and counts them:
// a handler that stays in flight while a case (or an adapter's own test)
// sends its duplicates.
type Gate struct {
	entered chan struct{}
	open    chan struct{}
	once    sync.Once

	mu            sync.Mutex
	running, most int
	total         int
}

// NewGate returns a closed gate.
func NewGate() *Gate { return &Gate{entered: make(chan struct{}, 100), open: make(chan struct{})} }

// Pass counts a call in and holds it until the gate opens or ctx ends.
func (g *Gate) Pass(ctx context.Context) error {
	g.mu.Lock()
	g.running++
	g.total++
	g.most = max(g.most, g.running)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.running--
		g.mu.Unlock()
	}()
	g.entered <- struct{}{}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release opens the gate for every call, held or to come.
func (g *Gate) Release() { g.once.Do(func() { close(g.open) }) }

// Counts reports the most calls held at once and the calls in all.
func (g *Gate) Counts() (most, total int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most, g.total
}

// WaitEntered waits for a call to be in the handler.
func (g *Gate) WaitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no call reached the handler")
	}
}

// counter counts a handler's runs and names each: "run-1", "run-2", …
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) next() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return "run-" + strconv.Itoa(c.n)
}

func (c *counter) runs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// want fails unless r ended with code c.
func want(t *testing.T, what string, r Result, c Code) {
	t.Helper()
	if r.Code != c {
		t.Fatalf("%s: %v (%q), want %v", what, r.Code, r.Message, c)
	}
}

// wantRetry fails unless r ended with code c and a RetryInfo delay.
func wantRetry(t *testing.T, what string, r Result, c Code) {
	t.Helper()
	want(t, what, r, c)
	if r.RetryDelay <= 0 {
		t.Fatalf("%s: %v without a RetryInfo delay", what, c)
	}
}

// wantText fails unless r is OK with text and replayed as said.
func wantText(t *testing.T, what string, r Result, text string, replayed bool) {
	t.Helper()
	want(t, what, r, OK)
	if r.Text != text || r.Replayed != replayed {
		t.Fatalf("%s: %q (replayed %v), want %q (replayed %v)", what, r.Text, r.Replayed, text, replayed)
	}
}

// drain reads a stream to its end.
func drain(s Stream) Result {
	for {
		if _, end := s.Recv(); end != nil {
			return *end
		}
	}
}
