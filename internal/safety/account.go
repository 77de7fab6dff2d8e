package safety

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Access is one request the account answered, in the order it decided them.
type Access struct {
	T        int64  `json:"t"`
	Worker   string `json:"w"`
	Write    bool   `json:"write"`
	Fence    uint64 `json:"f"`
	Base     int64  `json:"base"`  // a write: the value the writer read
	Value    int64  `json:"value"` // a write: what it wants stored; a read: what it got
	Accepted bool   `json:"ok"`
}

// Account is the resource the lock protects: one integer that workers read,
// increment and write back. It is not Redis, so what it accepted is a
// record of its own, independent of the lock.
//
// When fenced it refuses requests whose fence is below the highest it has
// seen, and a second write under one fence (each hold writes once): a holder
// that paused past its lease cannot write over its successor. Unfenced, it
// takes every write, as a resource that skips the token check would.
type Account struct {
	fenced bool

	mu        sync.Mutex
	value     int64
	highest   uint64 // the highest fence any request carried
	lastWrite uint64 // the fence of the last accepted write
	log       []Access
}

// ErrStale is the account's refusal of a request with a stale fence.
var ErrStale = errors.New("safety: stale fence refused")

// NewAccount returns an account at zero.
func NewAccount(fenced bool) *Account { return &Account{fenced: fenced} }

// Read returns the value for a holder with fence.
func (a *Account) Read(worker string, fence uint64) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ok := !a.fenced || fence >= a.highest
	a.highest = max(a.highest, fence)
	a.log = append(a.log, Access{T: Now(), Worker: worker, Fence: fence, Value: a.value, Accepted: ok})
	if !ok {
		return 0, ErrStale
	}
	return a.value, nil
}

// Write stores value, which the holder computed from base, the value it read.
func (a *Account) Write(worker string, fence uint64, base, value int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	ok := !a.fenced || (fence >= a.highest && fence > a.lastWrite)
	a.highest = max(a.highest, fence)
	a.log = append(a.log, Access{T: Now(), Worker: worker, Write: true, Fence: fence, Base: base, Value: value, Accepted: ok})
	if !ok {
		return ErrStale
	}
	a.value = value
	a.lastWrite = fence
	return nil
}

// Log returns a copy of every access, in the order the account decided them.
func (a *Account) Log() []Access {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.log)
}

// Serve exposes the account over HTTP on 127.0.0.1, for worker processes,
// until stop is called.
func (a *Account) Serve() (url string, stop func()) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(a.serveHTTP))
	srv.Listener.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("safety: listen: %v", err))
	}
	srv.Listener = ln
	srv.Start()
	return srv.URL, srv.Close
}

func (a *Account) serveHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fence, err1 := strconv.ParseUint(q.Get("f"), 10, 64)
	base, err2 := strconv.ParseInt(q.Get("base"), 10, 64)
	value, err3 := strconv.ParseInt(q.Get("value"), 10, 64)
	worker := q.Get("w")
	var err error
	switch r.URL.Path {
	case "/read":
		if err1 != nil {
			http.Error(w, "bad fence", http.StatusBadRequest)
			return
		}
		var v int64
		if v, err = a.Read(worker, fence); err == nil {
			fmt.Fprint(w, v)
			return
		}
	case "/write":
		if err := errors.Join(err1, err2, err3); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err = a.Write(worker, fence, base, value); err == nil {
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	http.Error(w, err.Error(), http.StatusConflict)
}

// AccountClient talks to an Account served over HTTP.
type AccountClient struct {
	base string
	hc   *http.Client
}

// NewAccountClient returns a client for the account at url (from Serve).
// Close it when done.
func NewAccountClient(url string) *AccountClient {
	return &AccountClient{base: url, hc: &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
	}}
}

// Close drops the client's idle connections.
func (c *AccountClient) Close() { c.hc.CloseIdleConnections() }

// Read is Account.Read over HTTP.
func (c *AccountClient) Read(ctx context.Context, worker string, fence uint64) (int64, error) {
	body, err := c.call(ctx, "/read", url.Values{"w": {worker}, "f": {strconv.FormatUint(fence, 10)}})
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(body), 10, 64)
}

// Write is Account.Write over HTTP.
func (c *AccountClient) Write(ctx context.Context, worker string, fence uint64, base, value int64) error {
	_, err := c.call(ctx, "/write", url.Values{"w": {worker}, "f": {strconv.FormatUint(fence, 10)},
		"base": {strconv.FormatInt(base, 10)}, "value": {strconv.FormatInt(value, 10)}})
	return err
}

func (c *AccountClient) call(ctx context.Context, path string, q url.Values) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path+"?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return "", err
	case resp.StatusCode == http.StatusConflict:
		return "", ErrStale
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("safety: account: %s: %s", resp.Status, b)
	}
	return string(b), nil
}
