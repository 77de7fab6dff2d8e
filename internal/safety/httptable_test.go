package safety

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/internal/safety/httpload"
	"github.com/reqlock/reqlock/memorystore"
	"github.com/reqlock/reqlock/redisstore"
)

// httpRow is one line of the HTTP table: what reached the handler, what
// came back, and the bound the scenario measured.
type httpRow struct {
	scenario, store   string
	requests, runs    int
	overlaps          int
	responses         string
	measured, verdict string
}

var httpTable struct {
	rows []httpRow // under table.mu
}

// httpRun collects one HTTP scenario's figures and failures.
type httpRun struct {
	t       *testing.T
	row     httpRow
	bad     []string
	tallies []httpload.Tally
	// faults: a lock may be held by a request that got 503 (its acquire
	// landed after it gave up), so a 409 need not meet a run.
	faults bool
}

func newHTTPRun(t *testing.T, scenario, store string) *httpRun {
	return &httpRun{t: t, row: httpRow{scenario: scenario, store: store}}
}

// failf records a way the scenario went against the docs.
func (h *httpRun) failf(format string, args ...any) {
	h.bad = append(h.bad, fmt.Sprintf(format, args...))
}

// measure appends a figure to the measured column.
func (h *httpRun) measure(format string, args ...any) {
	if h.row.measured != "" {
		h.row.measured += "; "
	}
	h.row.measured += fmt.Sprintf(format, args...)
}

// add checks one batch of results and runs: every response of a documented
// shape and right for its request, every 409 while the key was held, no two
// runs for a key at once.
func (h *httpRun) add(what string, tally httpload.Tally, st httpload.Stats) {
	h.row.requests += tally.Requests
	h.row.runs += st.Runs
	h.row.overlaps += st.Overlaps
	h.tallies = append(h.tallies, tally)
	if tally.Bad > 0 {
		h.failf("%s: %d wrong responses", what, tally.Bad)
		for _, ex := range tally.Examples {
			h.t.Logf("%s: %s", what, ex)
		}
	}
	if tally.Unjustified409 > 0 && !h.faults {
		h.failf("%s: %d× 409 while no request for the key ran", what, tally.Unjustified409)
	}
	if st.Overlaps > 0 {
		h.failf("%s: %d× two handler runs for one key at once, e.g. %q", what, st.Overlaps, st.Examples)
	}
	if ok := tally.Status[200]; ok != st.Runs {
		// Shape checked every 200's body; here each is one run, and each
		// run has its 200.
		h.failf("%s: %d× 200 for %d handler runs", what, ok, st.Runs)
	}
	h.t.Logf("%s: %d requests (%s), %d handler runs (%d unlocked) over %d keys", what, tally.Requests,
		tally.Statuses(), st.Runs, st.Unlocked, st.Keys)
}

// finish sets the verdict and records the row.
func (h *httpRun) finish() {
	h.row.responses = sumStatuses(h.tallies)
	if len(h.bad) > 0 {
		h.row.verdict = "FAIL: " + strings.Join(h.bad, "; ")
		h.t.Errorf("%s on %s: %s", h.row.scenario, h.row.store, h.row.verdict)
	} else {
		h.row.verdict = "as documented"
	}
	h.t.Logf("%s on %s: %s; %s", h.row.scenario, h.row.store, h.row.measured, h.row.verdict)
	table.mu.Lock()
	httpTable.rows = append(httpTable.rows, h.row)
	table.mu.Unlock()
}

func sumStatuses(ts []httpload.Tally) string {
	all := httpload.Tally{Status: map[int]int{}}
	for _, t := range ts {
		for c, n := range t.Status {
			all.Status[c] += n
		}
	}
	return all.Statuses()
}

// formatHTTPTable renders the HTTP rows as a Markdown table.
func formatHTTPTable(rows []httpRow) string {
	var b strings.Builder
	b.WriteString("| scenario | store | requests | handler runs | overlaps | responses | measured | verdict |\n")
	b.WriteString("|---|---|--:|--:|--:|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %s | %s |\n",
			r.scenario, r.store, r.requests, r.runs, r.overlaps, r.responses, r.measured, r.verdict)
	}
	return b.String()
}

// httpLoadFor is how long the load runs of the HTTP scenarios last: 2s, or
// DurationEnv when set.
func httpLoadFor(t *testing.T) time.Duration {
	if os.Getenv(DurationEnv) == "" {
		return 2 * time.Second
	}
	return loadFor(t)
}

// httpStore is a lock store for the HTTP scenarios, with a client of its
// Redis (nil for memory) that goes around any fault proxy.
type httpStore struct {
	name   string
	store  core.Store
	srv    *redistest.Server
	direct *redis.Client
}

// openStore opens a fresh store by name: "memory" or "redis".
func openStore(t *testing.T, name string) httpStore {
	if name == "memory" {
		return httpStore{name: name, store: memorystore.New()}
	}
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	return httpStore{name: name, store: redisstore.New(c), srv: srv, direct: c}
}
