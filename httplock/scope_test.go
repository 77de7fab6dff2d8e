package httplock_test

import (
	"testing"

	"github.com/reqlock/reqlock/httplock"
)

func TestDefaultScope(t *testing.T) {
	for _, c := range []struct{ method, route, want string }{
		{"POST", "/orders/{id}", "POST /orders/{id}"},
		{"POST", "POST /orders/{id}", "POST /orders/{id}"},
		{"HEAD", "GET /orders", "HEAD /orders"},
		{"POST", "example.com/orders", "POST example.com/orders"},
		{"POST", "POST example.com/orders", "POST example.com/orders"},
		{"POST", "", "POST"},
		{"POST", "/orders/:id", "POST /orders/:id"},
	} {
		if got := httplock.DefaultScope(c.method, c.route); got != c.want {
			t.Errorf("DefaultScope(%q, %q) = %q, want %q", c.method, c.route, got, c.want)
		}
	}
}

func TestLockKeyKeepsPairsApart(t *testing.T) {
	pairs := [][2]string{{"a", ":b"}, {"a:", "b"}, {"a", "\x00b"}, {"a\x00", "b"}, {"", "1:ab"}, {"1:a", "b"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		k := httplock.LockKey(p[0], p[1])
		if q, dup := seen[k]; dup {
			t.Fatalf("LockKey%q == LockKey%q == %q", p, q, k)
		}
		seen[k] = p
	}
}
