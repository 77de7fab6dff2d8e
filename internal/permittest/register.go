package permittest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Write is one write the register decided on.
type Write struct {
	T        int64
	Who      string
	Fence    uint64
	Accepted bool
}

// Register is the resource N permits protect, fenced as docs/semaphore.md
// describes: it remembers the N highest fences it has accepted, and once
// it has N it refuses a write whose fence is below the lowest of them: it
// takes writes only from the N newest permits it has heard from, so a
// holder that paused past its lease is refused once N newer permits have
// written. (An honest holder overtaken by N newer permits is refused too:
// the price of a check that knows nothing but fences.) Unfenced, it takes
// every write, as a resource that skips the check would.
//
// What it decided is a record of its own, independent of the permits.
type Register struct {
	n int

	mu       sync.Mutex
	unfenced bool
	top      []uint64 // the highest fences accepted, at most n, ascending
	log      []Write
}

// NewRegister returns an empty register for n permits.
func NewRegister(n int) *Register { return &Register{n: n} }

// Unfenced makes r take every write, for a run that must show the stale
// writes a fence would have refused. It returns r.
//
// Holders may be writing already: from then on, it takes every write.
func (r *Register) Unfenced() *Register {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unfenced = true
	return r
}

// Writer is how a holder writes: to a Register in this process, or over
// HTTP to one served by the parent.
type Writer interface {
	Write(ctx context.Context, who string, fence uint64) error
}

// ErrStale is the register's refusal of a write from a permit that N newer
// ones have overtaken.
var ErrStale = errors.New("permittest: stale fence refused")

// Write takes a write from who under fence unless N higher fences wrote
// first.
func (r *Register) Write(_ context.Context, who string, fence uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := r.unfenced || admits(r.top, r.n, fence)
	r.log = append(r.log, Write{T: now(), Who: who, Fence: fence, Accepted: ok})
	if !ok {
		return ErrStale
	}
	r.top = remember(r.top, r.n, fence)
	return nil
}

// admits is the register's rule: fewer than n fences remembered, or fence
// at least the lowest of them.
func admits(top []uint64, n int, fence uint64) bool {
	return len(top) < n || fence >= top[0]
}

// remember adds fence to top, the n highest fences so far, ascending.
func remember(top []uint64, n int, fence uint64) []uint64 {
	i, found := slices.BinarySearch(top, fence)
	if found {
		return top
	}
	top = slices.Insert(top, i, fence)
	if len(top) > n {
		top = top[1:]
	}
	return top
}

// Log is every write in the order the register decided them.
func (r *Register) Log() []Write {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// serve exposes r on 127.0.0.1 for child processes until stop.
func (r *Register) serve() (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fence, err := strconv.ParseUint(req.URL.Query().Get("fence"), 10, 64)
		if err != nil {
			http.Error(w, "bad fence", http.StatusBadRequest)
			return
		}
		if r.Write(req.Context(), req.URL.Query().Get("who"), fence) != nil {
			w.WriteHeader(http.StatusConflict)
		}
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return srv.URL, srv.Close, nil
}

// remote writes to a Register served by the parent.
type remote struct {
	base string
	hc   *http.Client
}

func newRemote(base string) *remote {
	return &remote{base: base, hc: &http.Client{Timeout: 5 * time.Second}}
}

func (c *remote) Write(ctx context.Context, who string, fence uint64) error {
	q := url.Values{"who": {who}, "fence": {strconv.FormatUint(fence, 10)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/write?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusConflict {
		return ErrStale
	}
	return nil
}
