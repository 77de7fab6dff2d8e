package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/redisstore"
)

// answeredPolls tells, on a channel, when each acquire of a waiter in line
// got its answer; hook is what the waiter's client adds.
type answeredPolls struct{ at chan time.Time }

func newAnsweredPolls() *answeredPolls { return &answeredPolls{at: make(chan time.Time, 64)} }

func (p *answeredPolls) hook() commandHook {
	return commandHook{answered: func(cmd redis.Cmder, err error) {
		if err == nil && isLineAcquire(cmd) {
			select {
			case p.at <- time.Now():
			default:
			}
		}
	}}
}

// isLineAcquire reports whether cmd is acquire.lua for a waiter: its five
// keys are the lock, the fence counter, the cancel marker, the record and,
// last, the key's line (a release names the line second).
func isLineAcquire(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 8 {
		return false
	}
	line, _ := args[7].(string)
	return strings.HasSuffix(line, ":q")
}

// nextPoll waits for the next answered poll, up to d; false if none came.
func (p *answeredPolls) nextPoll(d time.Duration) bool {
	select {
	case <-p.at:
		return true
	case <-time.After(d):
		return false
	}
}

// drain forgets the polls answered so far.
func (p *answeredPolls) drain() {
	for {
		select {
		case <-p.at:
		default:
			return
		}
	}
}

// pollScene is a holder on px's direct client and a waiter over its proxy,
// both with lease ttl, the waiter's answered polls counted.
type pollScene struct {
	px             proxied
	holder, waiter *core.Locker
	polls          *answeredPolls
	skey           string // "k"'s store key
}

func newPollScene(px proxied, ttl time.Duration) pollScene {
	s := pollScene{px: px, polls: newAnsweredPolls()}
	px.via.AddHook(s.polls.hook())
	s.holder = newLocker(redisstore.New(px.direct), core.WithTTL(ttl))
	s.waiter = newLocker(redisstore.New(px.via), core.WithTTL(ttl))
	s.skey, _ = s.holder.StoreKey("k")
	return s
}

// handOverAfterPoll puts the waiter in line behind first, the holder's lock
// on "k", and releases first right after one of the waiter's polls was
// answered: the hand-off the waiter then runs under has as much time left
// as it can have. It returns the waiter's lock.
func (s pollScene) handOverAfterPoll(t *testing.T, ctx context.Context, first *core.Lock) *core.Lock {
	t.Helper()
	got := obtainAsync(ctx, s.waiter, "k")
	waitFor(t, "the waiter to stand in line", func() bool { return s.px.direct.LLen(ctx, s.skey+":q").Val() == 1 })
	s.polls.drain()
	if !s.polls.nextPoll(5 * time.Second) {
		t.Fatal("the waiter did not poll")
	}
	lk := handOver(t, ctx, first, got)
	t.Logf("obtained under token %q", lk.Token())
	return lk
}

// handOver releases first and returns the lock its waiter, whose Obtain
// reports on got, takes; the lock is released when the test ends.
func handOver(t *testing.T, ctx context.Context, first *core.Lock, got chan obtained) *core.Lock {
	t.Helper()
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	o := <-got
	if o.err != nil {
		t.Fatal(o.err)
	}
	t.Cleanup(func() { _ = o.lk.Release(context.WithoutCancel(ctx)) })
	return o.lk
}
