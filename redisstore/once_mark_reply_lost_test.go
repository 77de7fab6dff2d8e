package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/redisstore"
)

// A Once whose mark landed but whose answer was lost (the store did not
// answer in time) never ran its function and gave its lock back: nothing
// is in doubt. The mark rides on the acquire (store.AcquireMarker), so the
// answer lost is the acquire's, and the Locker's cancel of it takes the
// mark back. The next Once, refusing runs in doubt, must run; told
// ErrInDoubt instead, the key is refused for the whole retention for a run
// that never started.
func TestOnceMarkAnswerLostIsNoDoubt(t *testing.T) {
	px := redistest.StartProxied(t)
	l := newLocker(redisstore.New(px.Via), core.WithDoubtPolicy(core.RefuseInDoubt), core.WithTTL(10*time.Second))
	other := newLocker(redisstore.New(px.Direct), core.WithDoubtPolicy(core.RefuseInDoubt))
	ctx := ctxT(t, 30*time.Second)
	// Load the scripts, so that the held EVALSHA is the one that lands.
	if _, err := l.Once(ctx, "warm-up", time.Minute, func(context.Context) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatalf("warm-up: %v", err)
	}

	held := make(chan *faultproxy.Held, 1)
	var arm sync.Once // the first command that marks the run only: the acquire
	redistest.AddCommandHook(t, ctx, px.Via, redistest.CommandHook{Sent: func(cmd redis.Cmder) {
		if marksRun(cmd) {
			arm.Do(func() { held <- px.Proxy.HoldNext(faultproxy.Downstream) }) // its answer
		}
	}})
	ran := false
	_, err := l.Once(ctx, "k", time.Hour, func(context.Context) ([]byte, error) {
		ran = true
		return []byte("paid"), nil
	})
	h := <-held
	h.Release()
	if !errors.Is(err, core.ErrUnavailable) || ran {
		t.Fatalf("Once whose mark was not answered: %v, ran %v; want ErrUnavailable and no run", err, ran)
	}
	redistest.Settle(t, px.Direct)

	out, err := other.Once(ctx, "k", time.Hour, func(context.Context) ([]byte, error) { return []byte("paid"), nil })
	if err != nil || out.InDoubt {
		t.Fatalf("Once after a Once that never ran: %+v, %v; want a plain run", out, err)
	}
}

// marksRun reports whether cmd is a script call that names the key's run
// mark: the first of a Once's is its acquire.
func marksRun(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 3 {
		return false
	}
	for _, a := range args[3:] {
		if k, ok := a.(string); ok && strings.HasSuffix(k, ":run") {
			return true
		}
	}
	return false
}
