package leadtest

import (
	"context"
	"fmt"
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
	Term     uint64
	Accepted bool
}

// Register is the resource a leader writes to: it refuses a write whose
// term is below the highest it has taken, as a resource that checks fences
// does. What it decided is a record of its own, independent of the lock.
type Register struct {
	mu      sync.Mutex
	highest uint64
	log     []Write
}

// Writer is how a leader writes: to a Register in this process, or over
// HTTP to one served by the parent.
type Writer interface {
	Write(ctx context.Context, who string, term uint64) error
}

// errStale is the register's refusal.
var errStale = fmt.Errorf("leadtest: stale term refused")

// Write takes a write from who under term unless a higher term wrote first.
func (r *Register) Write(_ context.Context, who string, term uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := term >= r.highest
	r.log = append(r.log, Write{T: now(), Who: who, Term: term, Accepted: ok})
	if !ok {
		return errStale
	}
	r.highest = term
	return nil
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
		term, err := strconv.ParseUint(req.URL.Query().Get("term"), 10, 64)
		if err != nil {
			http.Error(w, "bad term", http.StatusBadRequest)
			return
		}
		if r.Write(req.Context(), req.URL.Query().Get("who"), term) != nil {
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

func (c *remote) Write(ctx context.Context, who string, term uint64) error {
	q := url.Values{"who": {who}, "term": {strconv.FormatUint(term, 10)}}
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
		return errStale
	}
	return nil
}
