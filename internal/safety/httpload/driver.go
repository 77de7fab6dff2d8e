package httpload

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Request is one request for a Load to send.
type Request struct {
	Req *http.Request
	// Label names the lock the request asks for (route and key): 409s are
	// checked against the other requests of the same label.
	Label string
	// Want, when set, says whether status is right for this request; it
	// runs after Shape.
	Want func(status int) error
}

// Result is what came back for one request.
type Result struct {
	Label      string
	Start, End time.Time
	Status     int   // 0: no response
	Err        error // transport error, wrong shape, or Want's complaint
}

// Load sends requests from Workers goroutines until Max have been sent or
// Until has passed, whichever comes first.
type Load struct {
	Client  *http.Client
	Workers int
	Max     int
	Until   time.Time
	Next    func(i int) Request // the i-th request, from 0; called concurrently
}

// Run sends the load and returns every result, in no particular order.
func (l Load) Run(ctx context.Context) []Result {
	var (
		n   atomic.Int64
		mu  sync.Mutex
		out []Result
		wg  sync.WaitGroup
	)
	for range l.Workers {
		wg.Go(func() {
			var mine []Result
			for ctx.Err() == nil && time.Now().Before(l.Until) {
				i := int(n.Add(1)) - 1
				if i >= l.Max {
					break
				}
				mine = append(mine, Send(l.Client, l.Next(i)))
			}
			mu.Lock()
			out = append(out, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// maxBody bounds how much of a response is read: every documented body is
// far smaller.
const maxBody = 64 << 10

// Send sends one request with c and checks what comes back.
func Send(c *http.Client, rq Request) Result {
	res := Result{Label: rq.Label, Start: time.Now()}
	resp, err := c.Do(rq.Req)
	if err != nil {
		res.End, res.Err = time.Now(), fmt.Errorf("no response: %w", err)
		return res
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	_ = resp.Body.Close()
	res.End, res.Status = time.Now(), resp.StatusCode
	switch {
	case err != nil:
		res.Err = fmt.Errorf("%d, body cut: %w", resp.StatusCode, err)
	default:
		res.Err = Shape(resp.StatusCode, resp.Header, body)
	}
	if res.Err == nil && rq.Want != nil {
		res.Err = rq.Want(resp.StatusCode)
	}
	return res
}

// NewClient is an HTTP client for workers goroutines: one idle connection
// each, and a 20s bound on every request so a hung server fails the run
// instead of stalling it. CloseIdleConnections when done.
func NewClient(workers int) *http.Client {
	return &http.Client{
		Transport: &http.Transport{MaxIdleConns: workers, MaxIdleConnsPerHost: workers},
		Timeout:   20 * time.Second,
	}
}

// Tally sums results.
type Tally struct {
	Requests int
	Status   map[int]int
	Bad      int      // results with an error
	Examples []string // the first few errors
	// Unjustified409 counts 409s during which no request with the same
	// label ran its handler: a 409 must mean the key was held.
	Unjustified409 int
}

// Count tallies results.
func Count(results []Result) Tally {
	t := Tally{Requests: len(results), Status: map[int]int{}}
	byLabel := map[string][]Result{}
	for _, r := range results {
		t.Status[r.Status]++
		if r.Err != nil {
			t.Bad++
			if len(t.Examples) < 5 {
				t.Examples = append(t.Examples, fmt.Sprintf("%s: %v", r.Label, r.Err))
			}
		}
		if r.Label != "" && (r.Status == http.StatusOK || r.Status == http.StatusConflict) {
			byLabel[r.Label] = append(byLabel[r.Label], r)
		}
	}
	for _, rs := range byLabel {
		var ran []Result
		for _, r := range rs {
			if r.Status == http.StatusOK {
				ran = append(ran, r)
			}
		}
		sort.Slice(ran, func(i, j int) bool { return ran[i].Start.Before(ran[j].Start) })
		for _, r := range rs {
			if r.Status == http.StatusConflict && !overlapsAny(r, ran) {
				t.Unjustified409++
			}
		}
	}
	return t
}

// overlapsAny reports whether r's time overlaps one of ran's, sorted by
// start.
func overlapsAny(r Result, ran []Result) bool {
	end := sort.Search(len(ran), func(i int) bool { return ran[i].Start.After(r.End) })
	for _, o := range ran[:end] {
		if o.End.After(r.Start) {
			return true
		}
	}
	return false
}

// Statuses renders the status counts as "200: n, 409: n, …" in order.
func (t Tally) Statuses() string {
	codes := make([]int, 0, len(t.Status))
	for c := range t.Status {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	s := ""
	for i, c := range codes {
		if i > 0 {
			s += ", "
		}
		name := fmt.Sprint(c)
		if c == 0 {
			name = "none"
		}
		s += fmt.Sprintf("%s: %d", name, t.Status[c])
	}
	return s
}
