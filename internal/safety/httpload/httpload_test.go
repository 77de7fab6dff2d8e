package httpload

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

func TestShape(t *testing.T) {
	problem := func(status int, retry ...string) (int, http.Header, []byte) {
		h := http.Header{"Content-Type": {"application/problem+json"}}
		if len(retry) > 0 {
			h["Retry-After"] = retry
		}
		return status, h, []byte(`{"type":"about:blank","status":` + http.StatusText(status)[:0] + itoa(status) + `}`)
	}
	for _, c := range []struct {
		name   string
		status int
		h      http.Header
		body   []byte
		ok     bool
	}{
		{"handler's 200", 200, nil, []byte(RanBody), true},
		{"empty 200", 200, nil, nil, false},
		{"400 problem", 0, nil, nil, true},
		{"409 without Retry-After", 0, nil, nil, false},
		{"409 with Retry-After 0", 0, nil, nil, false},
		{"503 with Retry-After", 0, nil, nil, true},
		{"429 as text", 429, http.Header{"Retry-After": {"1"}}, []byte("busy"), false},
		{"500", 500, nil, nil, false},
		{"404", 404, nil, nil, false},
	} {
		switch c.name {
		case "400 problem":
			c.status, c.h, c.body = problem(400)
		case "409 without Retry-After":
			c.status, c.h, c.body = problem(409)
		case "409 with Retry-After 0":
			c.status, c.h, c.body = problem(409, "0")
		case "503 with Retry-After":
			c.status, c.h, c.body = problem(503, "2")
		}
		if err := Shape(c.status, c.h, c.body); (err == nil) != c.ok {
			t.Errorf("%s: Shape = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

func itoa(n int) string {
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}

func TestKeyShape(t *testing.T) {
	re := keyShape("reqlock:")
	for key, ok := range map[string]bool{
		"reqlock:{AAAAAAAAAAAAAAAAAAAAAA}":                                           true,
		"reqlock:{AAAAAAAAAAAAAAAAAAAAAA}:fence":                                     true,
		"reqlock:{AAAAAAAAAAAAAAAAAAAAAA}:record":                                    true,
		"reqlock:{AAAAAAAAAAAAAAAAAAAAAA}:q":                                         true,
		"reqlock:{AAAAAAAAAAAAAAAAAAAAAA}:cancel:BBBBBBBBBBBBBBBBBBBBBB":             true,
		"reqlock:{AAAAAAAAAAAAAAAAAAAAAA}:cancel:~CCCCCCCCCCCCCCCC/DDDDDDDDDDDDDDDD": true,
		"reqlock:{AAAAAAAAAAAAAAAAAAAAAA}:cancel:~CCCCCCCCCCCCCCCC/user-42":          false,
		"reqlock:{AAAAAAAAAAAAAAAAAAAAAA}:other":                                     false,
		"reqlock:{a b}":                                                              false,
		"reqlock:user-42":                                                            false,
		"other:{AAAAAAAAAAAAAAAAAAAAAA}":                                             false,
	} {
		if re.MatchString(key) != ok {
			t.Errorf("%q: match = %v, want %v", key, !ok, ok)
		}
	}
}

func TestCountJustifies409(t *testing.T) {
	t0 := time.Now()
	at := func(a, b int) (time.Time, time.Time) {
		return t0.Add(time.Duration(a) * time.Millisecond), t0.Add(time.Duration(b) * time.Millisecond)
	}
	r := func(label string, status, a, b int) Result {
		s, e := at(a, b)
		return Result{Label: label, Status: status, Start: s, End: e}
	}
	got := Count([]Result{
		r("k", 200, 0, 10), r("k", 409, 5, 6), // during the run
		r("k", 409, 20, 21), // after it: nobody held k
		r("j", 409, 5, 6),   // another key
	})
	if got.Unjustified409 != 2 {
		t.Errorf("Unjustified409 = %d, want 2", got.Unjustified409)
	}
}

// TestHostileSmoke sends a few hostile requests through every framework
// over the memory store; the safety suite sends many, over Redis too.
func TestHostileSmoke(t *testing.T) {
	l := core.NewLocker(memorystore.New(), core.WithLogger(quiet))
	for _, fw := range frameworks.All {
		t.Run(fw.Name, func(t *testing.T) {
			tr := NewTracker()
			url := fw.Serve(t, HostileRoutes(l, tr.Handler(func() time.Duration { return 0 })))
			c := NewClient(4)
			defer c.CloseIdleConnections()
			rnd := rand.New(rand.NewPCG(1, 2))
			reqs := make([]Request, 300)
			for i := range reqs {
				reqs[i] = Hostile(rnd, url)
			}
			res := Load{Client: c, Workers: 4, Max: len(reqs), Until: time.Now().Add(10 * time.Second),
				Next: func(i int) Request { return reqs[i] }}.Run(context.Background())
			tally := Count(res)
			if tally.Bad > 0 || tally.Requests != len(reqs) {
				t.Errorf("%d of %d requests wrong (%s): %v", tally.Bad, tally.Requests, tally.Statuses(), tally.Examples)
			}
		})
	}
}

// The shape the scans check is every key a Locker on Redis writes: a lock
// with its fence counter, a waiter's line and a replay record, each taken
// from a real server while it exists.
func TestKeyShapeMatchesWhatALockerWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := redistest.Start(t).Client(t)
	l := core.NewLocker(redisstore.New(c), core.WithTTL(2*time.Second))
	seen := map[string]bool{}
	look := func() {
		t.Helper()
		keys, err := c.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			seen[k] = true
		}
	}

	first, err := l.Obtain(ctx, "user-42")
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		lk, err := l.Obtain(ctx, "user-42")
		if err == nil {
			err = lk.Release(ctx)
		}
		waited <- err
	}()
	line, err := l.StoreKey("user-42")
	if err != nil {
		t.Fatal(err)
	}
	line += ":q"
	for n := int64(0); n == 0; {
		if n, err = c.Exists(ctx, line).Result(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	look()
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if _, err := l.Once(ctx, "order-7", time.Minute, func(context.Context) ([]byte, error) { return []byte("ok"), nil }); err != nil {
		t.Fatal(err)
	}
	look()

	shape := keyShape(core.DefaultPrefix)
	kinds := map[string]bool{}
	for k := range seen {
		if !shape.MatchString(k) {
			t.Errorf("%q is not of the shape the scans accept", k)
		}
		kinds[k[strings.IndexByte(k, '}')+1:]] = true
	}
	for _, want := range []string{"", ":fence", ":q", ":record"} {
		if !kinds[want] {
			t.Errorf("no key ending %q among %d seen: the test no longer makes one", want, len(seen))
		}
	}
}
