package pgstore

import (
	"testing"

	"github.com/reqlock/reqlock/core/store"
)

func TestParseWake(t *testing.T) {
	for _, c := range []struct {
		in          string
		key, waiter string
		fence       uint64
		ok          bool
	}{
		{"reqlock:{abc} i/w", "reqlock:{abc}", "i/w", 0, true},
		{"reqlock:{abc} i/w 42", "reqlock:{abc}", "i/w", 42, true},
		{"my prefix:{abc} i/w.label 7", "my prefix:{abc}", "i/w.label", 7, true},
		{"* i/w", store.WakeAll, "i/w", 0, true},
		{"reqlock:{abc} i/w x", "reqlock:{abc}", "i/w", 0, true},
		{"garbage", "", "", 0, false},
		{"* ", "", "", 0, false},
	} {
		key, waiter, fence, ok := parseWake(c.in)
		if ok != c.ok || (ok && (key != c.key || waiter != c.waiter || fence != c.fence)) {
			t.Errorf("parseWake(%q) = %q, %q, %d, %v", c.in, key, waiter, fence, ok)
		}
	}
}
