package core

import "testing"

func TestNormalAddr(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:7000":   "127.0.0.1:7000",
		"::1:7000":         "[::1]:7000", // as Redis writes it in MOVED
		"[::1]:7000":       "[::1]:7000", // as go-redis writes it
		"fe80::1%lo0:6379": "[fe80::1%lo0]:6379",
		"redis-a:6379":     "redis-a:6379",
		"":                 "",
	} {
		if got := normalAddr(in); got != want {
			t.Errorf("normalAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
