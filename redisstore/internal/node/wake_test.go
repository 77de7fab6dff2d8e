package node

import "testing"

// parseWake reads what release.lua publishes; a fence that is no number is
// none.
func TestParseWake(t *testing.T) {
	for _, c := range []struct {
		in          string
		key, waiter string
		fence       uint64
		ok          bool
	}{
		{"reqlock:{a} i/w 42", "reqlock:{a}", "i/w", 42, true},
		{"reqlock:{a} i/w.pod-1", "reqlock:{a}", "i/w.pod-1", 0, true},
		{"reqlock:{a} i/w x", "reqlock:{a}", "i/w", 0, true},
		{"reqlock:{a} i/w 99999999999999999999", "reqlock:{a}", "i/w", 0, true},
		{"my app:{a} i/w 7", "my app:{a}", "i/w", 7, true},
		{"a b:{a} i/w.x", "a b:{a}", "i/w.x", 0, true},
		{"nospace", "", "", 0, false},
		{"no tag i/w", "", "", 0, false},
	} {
		key, waiter, fence, ok := parseWake(c.in)
		if key != c.key || waiter != c.waiter || fence != c.fence || ok != c.ok {
			t.Errorf("%q: %q %q %d %v", c.in, key, waiter, fence, ok)
		}
	}
}
