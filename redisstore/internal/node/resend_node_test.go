package node

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
)

// resendingNode is a store over a client through a fault proxy that
// resends (go-redis's default MaxRetries) after a short read timeout, the
// scripts loaded; beside it a direct client and a store over it.
func resendingNode(t *testing.T) (s *Node, p *faultproxy.Proxy, direct *redis.Client, ctx context.Context) {
	t.Helper()
	srv := redistest.Start(t)
	p = faultproxy.Start(t, srv.Addr)
	opts := redistest.ClientOptions(p.Addr())
	opts.MaxRetries = 3
	opts.ReadTimeout = 300 * time.Millisecond
	via := redis.NewClient(opts)
	t.Cleanup(func() { _ = via.Close() })
	direct = srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if err := LoadScripts(ctx, via); err != nil {
		t.Fatal(err)
	}
	return New(via), p, direct, ctx
}

// heldEvalsha checks that h holds a command, and that it is a script call.
func heldEvalsha(t *testing.T, h *faultproxy.Held) {
	t.Helper()
	select {
	case <-h.Captured():
	case <-time.After(5 * time.Second):
		t.Fatal("no command was held")
	}
	if !bytes.Contains(h.Bytes(), []byte("evalsha")) {
		t.Fatalf("held %q, want an acquire", h.Bytes())
	}
}

// landed returns what key holds once a released copy had time to land: the
// first value seen within a second, or "" if it stayed free.
func landed(ctx context.Context, direct *redis.Client, key string) string {
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if v, err := direct.Get(ctx, key).Result(); err == nil {
			return v
		}
		time.Sleep(10 * time.Millisecond)
	}
	return ""
}

// holdScript holds the next script call sent through p, letting anything
// sent before it (a handshake, a slot map reload) pass: each is released
// only once the next chunk is armed, so the script cannot slip through.
func holdScript(t *testing.T, p *faultproxy.Proxy) *faultproxy.Held {
	t.Helper()
	h := p.HoldNext(faultproxy.Upstream)
	for range 20 {
		t.Cleanup(h.Release)
		select {
		case <-h.Captured():
		case <-time.After(5 * time.Second):
			t.Fatal("no command was held")
		}
		if bytes.Contains(h.Bytes(), []byte("evalsha")) {
			return h
		}
		next := p.HoldNext(faultproxy.Upstream)
		h.Release()
		h = next
	}
	t.Fatal("no script call among the commands held")
	return nil
}
