package httpcases

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
)

// Env is what a case works with: one framework over one fresh store.
type Env struct {
	T       *testing.T
	FW      Framework
	Backend Backend
	client  *http.Client
	probes  []*Probe
}

// Quiet is a logger that drops everything.
var Quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Locker returns a Locker over the env's store with a quiet logger.
func (e *Env) Locker(opts ...core.Option) *core.Locker {
	return core.NewLocker(e.Backend.Store, append([]core.Option{core.WithLogger(Quiet)}, opts...)...)
}

// OutageLocker is Locker with a short lease, for cases that take the store
// away. What a Lock retries in the background after a store call failed (a
// release, the undoing of an acquire) goes on until its lease ends, and has
// to end before the leak check at the end of the test binary.
func (e *Env) OutageLocker(opts ...core.Option) *core.Locker {
	return e.Locker(append([]core.Option{core.WithTTL(time.Second)}, opts...)...)
}

// Serve starts the framework's server with routes. Blocked handlers are
// released before the server closes.
func (e *Env) Serve(routes ...Route) string {
	url := e.FW.Serve(e.T, routes)
	e.T.Cleanup(func() {
		for _, p := range e.probes {
			p.Release()
		}
	})
	return url
}

// Probe returns a new probe for this env's handlers.
func (e *Env) Probe() *Probe {
	p := &Probe{byUser: map[string]int{}, entered: make(chan string, 256), release: make(chan struct{})}
	e.probes = append(e.probes, p)
	return p
}

// Result is a response, read whole.
type Result struct {
	Status  int
	Header  http.Header
	Body    []byte
	Err     error
	Elapsed time.Duration
}

// Problem decodes the body as a problem object.
func (r Result) Problem() httplock.Problem {
	var p httplock.Problem
	_ = json.Unmarshal(r.Body, &p)
	return p
}

// Do sends one request with the given headers (name, value, name, value…).
func (e *Env) Do(ctx context.Context, method, url string, hdr ...string) Result {
	return e.DoBody(ctx, method, url, nil, hdr...)
}

// DoBody is Do with a request body (none when nil).
func (e *Env) DoBody(ctx context.Context, method, url string, body []byte, hdr ...string) Result {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	start := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		return Result{Err: err, Elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	return Result{Status: resp.StatusCode, Header: resp.Header, Body: got, Err: err, Elapsed: time.Since(start)}
}

// Send is Do with a 20s bound, so a broken case fails instead of hanging.
func (e *Env) Send(method, url string, hdr ...string) Result {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return e.Do(ctx, method, url, hdr...)
}

// Hold sends a request that p keeps inside the handler and returns once it
// is there; finish lets it go and expects it to succeed.
func (e *Env) Hold(p *Probe, method, url string, hdr ...string) (finish func()) {
	held := e.Async(method, url, hdr...)
	p.Entered(e.T)
	return func() {
		p.Release()
		expectOK(e, <-held)
	}
}

// Async sends a request in the background; the result arrives on the channel.
func (e *Env) Async(method, url string, hdr ...string) <-chan Result {
	ch := make(chan Result, 1)
	go func() { ch <- e.Send(method, url, hdr...) }()
	return ch
}

// Probe watches a handler: how many calls, how many at once.
type Probe struct {
	mu          sync.Mutex
	in, maxIn   int
	calls       int
	byUser      map[string]int
	entered     chan string // each entering user, buffered
	release     chan struct{}
	releaseOnce sync.Once
}

func (p *Probe) enter(r *http.Request) func() {
	u := r.Header.Get(UserHeader)
	p.mu.Lock()
	p.in++
	p.calls++
	p.byUser[u]++
	p.maxIn = max(p.maxIn, p.in)
	p.mu.Unlock()
	p.entered <- u
	return func() {
		p.mu.Lock()
		p.in--
		p.mu.Unlock()
	}
}

// Stats returns calls so far and the most calls ever inside at once.
func (p *Probe) Stats() (calls, maxIn int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls, p.maxIn
}

// Calls returns how often user's requests reached the handler.
func (p *Probe) Calls(user string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byUser[user]
}

// Entered waits for a request to enter the handler and returns its user.
func (p *Probe) Entered(t *testing.T) string {
	t.Helper()
	select {
	case u := <-p.entered:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no request reached the handler within 10s")
		return ""
	}
}

// Release lets every blocked handler return.
func (p *Probe) Release() { p.releaseOnce.Do(func() { close(p.release) }) }

// Block is a handler that holds until Release (or its client leaves, or
// 15s) and answers 200.
func (p *Probe) Block(w http.ResponseWriter, r *http.Request) {
	defer p.enter(r)()
	select {
	case <-p.release:
	case <-r.Context().Done():
	case <-time.After(15 * time.Second):
	}
	w.WriteHeader(http.StatusOK)
}

// BlockUser blocks for the one user and answers the others at once.
func (p *Probe) BlockUser(user string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(UserHeader) == user {
			p.Block(w, r)
			return
		}
		p.Sleep(0)(w, r)
	}
}

// Sleep is a handler that takes d and answers 200.
func (p *Probe) Sleep(d time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer p.enter(r)()
		time.Sleep(d)
		w.WriteHeader(http.StatusOK)
	}
}

// Eventually polls cond every 10ms for up to 5s.
func Eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// LogBuffer is a slog logger that keeps what it is given.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Logger returns a logger that writes into b.
func (b *LogBuffer) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// Write implements io.Writer for the logger.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Count returns how many lines contain s.
func (b *LogBuffer) Count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Count(b.buf.Bytes(), []byte(s))
}

// String returns everything logged so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
