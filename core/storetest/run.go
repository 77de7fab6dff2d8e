package storetest

import (
	"slices"
	"strings"
	"testing"
)

// promise is one subtest: one thing a store promises, checked one way.
type promise struct {
	name string
	run  func(t *testing.T, h Harness)
}

// group is the promises of one part of the contract, run as one subtest.
type group struct {
	name     string
	promises []promise
}

// groups is the whole suite, in the order Run runs it.
func groups() []group {
	return []group{
		{"exclusion", exclusionPromises},
		{"fences", fencePromises},
		{"stale", stalePromises},
		{"lease", leasePromises},
		{"records", recordPromises},
		{"runs", runPromises},
		{"acquire-marks", acquireMarkPromises},
		{"units", unitPromises},
		{"lines", linePromises},
		{"cancel", cancelPromises},
		{"inspect", inspectPromises},
		{"contract", contractPromises},
		{"semaphore", semaphorePromises},
	}
}

// Promises lists the path of every promise Run checks, "group/promise",
// in the order it runs them: the names Harness.Waive takes.
func Promises() []string {
	var names []string
	for _, g := range groups() {
		for _, p := range g.promises {
			names = append(names, g.name+"/"+p.name)
		}
	}
	return names
}

// Run checks every promise of the store contract against the stores
// h.New returns, each as a subtest named "group/promise"; what the store
// does not implement, or h waives, is skipped with the reason.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("storetest: Harness.New is nil")
	}
	known := Promises()
	for name := range h.Waive {
		if !slices.Contains(known, name) && !slices.ContainsFunc(known, func(k string) bool { return strings.HasPrefix(k, name+"/") }) {
			t.Fatalf("storetest: Harness.Waive names %q, which is no promise or group (see Promises)", name)
		}
	}
	if s := h.New(t); s != nil {
		t.Logf("storetest: the store (%T) offers %v beyond core.Store", s, Offers(s))
	}
	for _, g := range groups() {
		t.Run(g.name, func(t *testing.T) {
			if why, ok := h.Waive[g.name]; ok {
				t.Skipf("waived by the harness: %s", why)
			}
			for _, p := range g.promises {
				t.Run(p.name, func(t *testing.T) {
					if why, ok := h.Waive[g.name+"/"+p.name]; ok {
						t.Skipf("waived by the harness: %s", why)
					}
					p.run(t, h)
				})
			}
		})
	}
}
