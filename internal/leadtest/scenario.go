package leadtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
)

// Target is a store the scenarios run on, and how its instances reach it.
type Target struct {
	Store string // its name in the table
	// Addrs is what a child process builds its store from (see Child):
	// killed and paused, the instances are processes.
	Addrs []string
	// Local, when set instead, is the store of an instance in this
	// process (a store without a server, such as memory): killed, paused
	// and held at its Gate.
	Local func(name string) store.Store
	// Linked is the store of an instance in this process that reaches the
	// servers only through links of its own, for the Hold fault.
	Linked func(name string) (store.Store, []*faultproxy.Proxy)
	// Slack is added to the hand-over bound, for a store that frees an
	// expired lease late (etcd's lessor checks every half second).
	Slack time.Duration
}

// Row is one scenario's line in a table of results.
type Row struct {
	Scenario, Store string
	Result
	Failed bool
}

// Scenario has three instances lead a key on tg with leases of ttl, does
// fault twice to whoever leads, checks the run (Check) and returns its
// row. A test that uses processes (tg.Addrs) calls Child first.
func Scenario(t *testing.T, tg Target, ttl time.Duration, fault Fault) Row {
	t.Helper()
	r := NewRun(t, ttl)
	var insts []Instance
	for _, n := range []string{"a", "b", "c"} {
		switch {
		case tg.Local != nil:
			insts = append(insts, r.StartLocal(n, tg.Local(n)))
		case fault == Hold:
			s, links := tg.Linked(n)
			insts = append(insts, r.StartLinked(n, s, links))
		default:
			insts = append(insts, r.Spawn(n, tg.Addrs))
		}
	}
	r.Drive(insts, fault, fault)
	res := r.Check(ttl + store.HandOffTimeout + 750*time.Millisecond + tg.Slack)
	return Row{Scenario: describe(fault, tg.Local != nil), Store: tg.Store, Result: res, Failed: t.Failed()}
}

// describe is a scenario's text in the table.
func describe(f Fault, local bool) string {
	var what string
	switch {
	case f == Kill && local:
		what = "the leader cut off from the store and stopped"
	case f == Kill:
		what = "the leader process killed (kill -9)"
	case f == Pause && local:
		what = "the leader's store calls stalled for 2 leases, its fn running on"
	case f == Pause:
		what = "the leader process SIGSTOPped for 2 leases"
	case local:
		what = "the leader's store calls held for 2 leases, then landing late"
	default:
		what = "the leader's commands held on its link for 2 leases, then delivered"
	}
	return "leadership: " + what + ", twice"
}

// Verdict is "safe" with the slowest hand-over, or what failed.
func (r Row) Verdict() string {
	if r.Failed {
		return "FAIL: " + r.Result.String()
	}
	if len(r.HandOvers) == 0 {
		return "safe"
	}
	return fmt.Sprintf("safe; slowest new leader %v after the fault", slices.Max(r.HandOvers).Round(10*time.Millisecond))
}

// FormatRows renders rows as a Markdown table, in the columns of
// internal/safety's: holds are terms, and no reads are judged.
func FormatRows(rows []Row) string {
	var b strings.Builder
	b.WriteString("| scenario | store | terms | overlaps | stale writes accepted (refused) | verdict |\n")
	b.WriteString("|---|---|--:|--:|--:|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d (%d) | %s |\n", r.Scenario, r.Store, r.Terms, r.Overlaps, r.Stale, r.Refused, r.Verdict())
	}
	return b.String()
}
