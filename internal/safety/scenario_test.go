package safety

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/backoff"
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/redistest"
)

// DurationEnv sets how long each scenario runs its load (a Go duration,
// "5m"); by default each runs about a second, enough to see every fault
// once. TableEnv names a file the results table is written to (by default
// one in the test's temporary directory).
const (
	DurationEnv = "REQLOCK_SAFETY_DURATION"
	TableEnv    = "REQLOCK_SAFETY_TABLE"
)

// loadFor is how long a scenario keeps its workers busy.
func loadFor(t *testing.T) time.Duration {
	s := os.Getenv(DurationEnv)
	if s == "" {
		return time.Second
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive Go duration such as 5m", DurationEnv, s)
	}
	return d
}

// maxOps bounds every worker's loop in count as well as in time.
const maxOps = 1_000_000

// outcome is what a scenario's documentation says may happen.
type outcome int

const (
	never outcome = iota // the docs promise it does not happen
	may                  // the docs allow it; it may or may not show in a run
	must                 // the scenario is built to show it, and fails if it does not
)

// expect is a scenario's expected outcome, written down before it runs.
type expect struct {
	overlap  outcome // two workers believed they held the lock at once
	lateLost outcome // a Lost() fired after another worker acquired
	stale    outcome // the account accepted a stale write (it checks fences: never, where the fence holds)
	refused  outcome // the account refused a stale write: fencing was needed, and worked
	lostUpd  outcome // an accepted write was based on a stale read
	// readRefused: a holder's read was refused, its fence below one the
	// account had seen (a late read, or fences that went back). Judged
	// only when must: delays and Redlock's fences make it possible anywhere.
	readRefused outcome
	broken      bool // a deliberately broken lock: the checkers must catch it
}

// row is one line of the results table.
type row struct {
	scenario, store string
	ops             int // holds: acquires that succeeded
	overlaps        int
	stale, refused  int
	refusedReads    int
	lostUpdates     int
	lead            time.Duration
	leadOK          bool
	verdict         string
}

var table struct {
	mu   sync.Mutex
	rows []row
}

// run is one scenario's history, account and workers.
type run struct {
	t       *testing.T
	hist    *History
	acct    *Account
	client  *AccountClient
	until   time.Time
	key     string
	workers []*Worker
	wg      sync.WaitGroup
	ctx     context.Context
	procs   []*proc
}

func newRun(t *testing.T, fenced bool) *run {
	acct := NewAccount(fenced)
	url, stop := acct.Serve()
	client := NewAccountClient(url)
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{t: t, hist: NewHistory(nil), acct: acct, client: client, key: "account", ctx: ctx}
	r.until = time.Now().Add(loadFor(t))
	t.Cleanup(func() {
		cancel()
		r.wg.Wait()
		client.Close()
		stop()
	})
	return r
}

// url is where worker processes reach the account.
func (r *run) url() string { return r.client.base }

var quiet = slog.New(slog.DiscardHandler)

// fastRetry keeps waiters close behind a release, so that holds follow each
// other closely and overlaps have every chance to show.
var fastRetry = backoff.Exponential(time.Millisecond, 20*time.Millisecond)

func locker(s core.Store, ttl time.Duration) *core.Locker {
	return core.NewLocker(s, core.WithTTL(ttl), core.WithRetry(fastRetry), core.WithLogger(quiet))
}

// client returns a client of addr of its own, closed at cleanup.
func client(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(redistest.ClientOptions(addr))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// worker adds a goroutine worker over l.
func (r *run) worker(l *core.Locker, pause func() time.Duration) *Worker {
	w := &Worker{
		Name:    fmt.Sprintf("g%d", len(r.workers)+1),
		Locker:  l,
		Key:     r.key,
		Account: r.client,
		History: r.hist,
		Pause:   pause,
	}
	r.workers = append(r.workers, w)
	return w
}

// start runs every worker added so far until the run's time is up.
func (r *run) start() {
	for _, w := range r.workers {
		r.wg.Go(func() { w.Run(r.ctx, maxOps, r.until) })
	}
}

// late starts w, added after start, until the run's time is up, and for
// at least a second.
func (r *run) late(w *Worker) {
	until := r.until
	if soon := time.Now().Add(time.Second); until.Before(soon) {
		until = soon
	}
	r.wg.Go(func() { w.Run(r.ctx, maxOps, until) })
}

// wait waits for every worker, goroutine or process.
func (r *run) wait() {
	r.wg.Wait()
	for _, p := range r.procs {
		p.wait(r.t)
	}
}

// faultsUntilDone calls fault over and over until the run's time is up,
// at least once.
func (r *run) faultsUntilDone(fault func()) {
	for first := true; first || time.Now().Before(r.until); first = false {
		if r.ctx.Err() != nil {
			return
		}
		fault()
	}
}

// heldBy waits until w acquires the lock afresh (a hold that a fault
// already hit does not count), up to 5s or until the run's time is up.
func (r *run) heldBy(w *Worker) bool {
	ch := w.NextHold()
	wait := time.NewTimer(min(5*time.Second, max(time.Until(r.until), 0)))
	defer wait.Stop()
	select {
	case <-ch:
		return true
	case <-wait.C:
		return false
	}
}

// finish waits for the workers, runs every checker, compares the outcome
// with e and records the row.
func (r *run) finish(scenario, store string, e expect) row {
	t := r.t
	t.Helper()
	r.wait()
	events := r.hist.Events()
	log := r.acct.Log()
	holds := Holds(events)
	overlaps := CheckOverlap(holds)
	stale := CheckStaleWrites(log)
	lost := CheckLostUpdates(log)
	late := CheckLostLatency(holds)
	lead, leadOK := LostLead(holds)
	rw := row{scenario: scenario, store: store, overlaps: Definite(overlaps), stale: len(stale),
		refused: Refused(log), refusedReads: RefusedReads(log), lostUpdates: len(lost), lead: lead, leadOK: leadOK}
	for _, h := range holds {
		if !h.Possible {
			rw.ops++
		}
	}

	var bad, caught []string
	judge := func(what string, o outcome, n int, examples []string) {
		switch {
		case o == never && n > 0:
			bad = append(bad, fmt.Sprintf("%d× %s", n, what))
			for i, ex := range examples {
				if i == 3 {
					break
				}
				t.Log(ex)
			}
		case o == must && n == 0:
			bad = append(bad, "no "+what+" shown")
		case o == must:
			caught = append(caught, what)
		}
	}
	judge("overlap", e.overlap, rw.overlaps, strs(overlaps))
	judge("late Lost", e.lateLost, len(late), strs(late))
	judge("stale write accepted", e.stale, rw.stale, strs(stale))
	judge("lost update", e.lostUpd, rw.lostUpdates, strs(lost))
	judge("stale write refused", e.refused, rw.refused, nil)
	if e.readRefused == must {
		judge("read refused", must, rw.refusedReads, nil)
	}
	if rw.ops == 0 {
		bad = append(bad, "no lock was ever held")
	}

	switch {
	case len(bad) > 0:
		rw.verdict = "FAIL: " + strings.Join(bad, ", ")
		t.Errorf("%s on %s: %s", scenario, store, rw.verdict)
	case e.broken:
		rw.verdict = "broken on purpose; caught: " + strings.Join(caught, ", ")
	case rw.overlaps > 0 && rw.stale == 0:
		rw.verdict = "two holders, as documented; fence held"
	case rw.overlaps > 0:
		rw.verdict = "two holders and a stale write, as documented"
	default:
		rw.verdict = "safe"
	}
	if rw.refusedReads > 0 && !strings.HasPrefix(rw.verdict, "FAIL") {
		rw.verdict += fmt.Sprintf("; %d reads refused", rw.refusedReads)
	}
	t.Logf("%s on %s: %d holds, %d overlaps, %d stale writes accepted (%d refused), %d lost updates, Lost lead %s: %s",
		scenario, store, rw.ops, rw.overlaps, rw.stale, rw.refused, rw.lostUpdates, leadText(rw), rw.verdict)
	table.mu.Lock()
	table.rows = append(table.rows, rw)
	table.mu.Unlock()
	return rw
}

func strs[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// leadText is how long before the next holder's acquire the worst Lost()
// fired; "−" when no lock was lost while someone waited.
func leadText(r row) string {
	if !r.leadOK {
		return "—"
	}
	if r.lead < 0 {
		return fmt.Sprintf("%v late", (-r.lead).Round(time.Millisecond))
	}
	return fmt.Sprintf("%v early", r.lead.Round(100*time.Microsecond))
}

// formatTable renders rows as a Markdown table.
func formatTable(rows []row) string {
	var b strings.Builder
	b.WriteString("| scenario | store | holds | overlaps | stale writes accepted (refused) | lost updates | worst Lost() vs next acquire | verdict |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d (%d) | %d | %s | %s |\n",
			r.scenario, r.store, r.ops, r.overlaps, r.stale, r.refused, r.lostUpdates, leadText(r), r.verdict)
	}
	return b.String()
}

// writeTable prints the tables (locks, then HTTP) and writes them to
// TableEnv's file, or to one in the test's temporary directory.
func writeTable(t *testing.T) {
	table.mu.Lock()
	text := formatTable(table.rows)
	if len(httpTable.rows) > 0 {
		text += "\n" + formatHTTPTable(httpTable.rows)
	}
	if len(effectsRows) > 0 {
		text += "\n" + EffectsTable(effectsRows)
	}
	table.mu.Unlock()
	path := os.Getenv(TableEnv)
	if path == "" {
		path = filepath.Join(t.TempDir(), "safety.md")
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Errorf("writing the table: %v", err)
	}
	t.Logf("safety table (also in %s):\n%s", path, text)
}
