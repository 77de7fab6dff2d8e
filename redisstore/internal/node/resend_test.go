package node

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// reply is a Redis error reply, as go-redis hands one over.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

// What the store sends again, and when it remembers that a copy may still
// be on its way: only when no answer came.
func TestResendKind(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(live)
	cancel()
	for _, c := range []struct {
		name            string
		ctx             context.Context
		err             error
		again, inFlight bool
	}{
		{"connection broke", live, io.EOF, true, true},
		{"read timed out", live, &net.OpError{Op: "read", Err: timeoutErr{}}, true, true},
		{"loading", live, reply("LOADING Redis is loading the dataset in memory"), true, false},
		{"readonly", live, reply("READONLY You can't write against a read only replica."), true, false},
		{"script error", live, reply("ERR reqlock: acquire landed after it was cancelled"), false, false},
		{"caller gave up", gone, io.EOF, false, false},
		{"deadline", live, context.DeadlineExceeded, false, false},
		{"client closed", live, redis.ErrClosed, false, false},
	} {
		again, inFlight := resendKind(c.ctx, c.err)
		if again != c.again || inFlight != c.inFlight {
			t.Errorf("%s: again %v, in flight %v; want %v, %v", c.name, again, inFlight, c.again, c.inFlight)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// The pause before a resend grows from the client's MinRetryBackoff and
// stays within its MaxRetryBackoff.
func TestResendBackoff(t *testing.T) {
	p := resendPolicy{max: 3, minBackoff: 8 * time.Millisecond, maxBackoff: 512 * time.Millisecond}
	for attempt, top := range map[int]time.Duration{1: 8 * time.Millisecond, 2: 16 * time.Millisecond, 10: 512 * time.Millisecond, 60: 512 * time.Millisecond} {
		for range 50 {
			if d := p.backoff(attempt); d < top/2 || d > top {
				t.Fatalf("attempt %d: %v, want within [%v, %v]", attempt, d, top/2, top)
			}
		}
	}
	if d := (resendPolicy{max: 3}).backoff(1); d != 0 {
		t.Errorf("no backoff set: %v", d)
	}
}

// A token is remembered until its release, and a store that resent
// nothing takes no lock to find that out.
func TestResentTokens(t *testing.T) {
	var r resentTokens
	if r.has("a") {
		t.Fatal("empty set has a token")
	}
	r.note("a")
	if !r.has("a") || r.has("b") {
		t.Fatal("note did not keep exactly its token")
	}
	r.forget("a")
	if r.has("a") || r.n.Load() != 0 {
		t.Fatal("forget kept the token")
	}
}
