package core_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reqlock/reqlock/internal/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
)

// waitCaptured waits, up to 5s, for h to hold a command: what names it in
// the failure.
func waitCaptured(t *testing.T, h *faultproxy.Held, what string) {
	t.Helper()
	select {
	case <-h.Captured():
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s was held", what)
	}
}

// proxied is a Redis reached two ways: through a fault proxy, and directly
// (the observer, which no fault touches).
type proxied struct {
	proxy  *faultproxy.Proxy
	via    *redis.Client
	direct *redis.Client
	// answered counts the commands via answered without error.
	answered *atomic.Int64
}

func startProxied(t *testing.T) proxied {
	t.Helper()
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	via := redis.NewClient(redistest.ClientOptions(p.Addr()))
	t.Cleanup(func() { _ = via.Close() })
	// A connection's handshake is a command too: have one open before a
	// test holds "the next command".
	if err := via.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	px := proxied{proxy: p, via: via, direct: srv.Client(t), answered: new(atomic.Int64)}
	via.AddHook(commandHook{answered: func(_ redis.Cmder, err error) {
		if err == nil {
			px.answered.Add(1)
		}
	}})
	return px
}

// holdNext holds the next command sent through the proxy and returns a
// func that lets it land once the client has given up on it and closed its
// connection.
func (px proxied) holdNext(t *testing.T) (land func()) {
	t.Helper()
	h := px.proxy.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	return func() {
		t.Helper()
		waitCaptured(t, h, "command")
		select {
		case <-h.Conn().ClientClosed():
		case <-time.After(5 * time.Second):
			t.Fatal("the client kept the connection of the held command")
		}
		h.Release()
	}
}

// settle waits until Redis has run whatever a released hold let through:
// a command sent after it on the same server runs after it.
func settle(t *testing.T, c *redis.Client) {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}
