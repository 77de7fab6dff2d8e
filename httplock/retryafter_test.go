package httplock

import (
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	for _, c := range []struct {
		hint, holder, want time.Duration
	}{
		{time.Second, 0, time.Second},
		{time.Second, 10 * time.Second, time.Second},       // a renewed lease says nothing about the wait
		{time.Second, 300 * time.Millisecond, time.Second}, // never below one second
		{5 * time.Second, 2100 * time.Millisecond, 3 * time.Second},
		{5 * time.Second, 3 * time.Second, 3 * time.Second},
		{1500 * time.Millisecond, 0, 2 * time.Second}, // whole seconds, rounded up
		{0, 0, time.Second},
	} {
		if got := retryAfter(c.hint, c.holder); got != c.want {
			t.Errorf("retryAfter(%v, %v) = %v, want %v", c.hint, c.holder, got, c.want)
		}
	}
	if s := formatRetryAfter(3 * time.Second); s != "3" {
		t.Errorf("formatRetryAfter(3s) = %q", s)
	}
}
