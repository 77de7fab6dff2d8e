package redistest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
)

// WaitCaptured waits, up to 5s, for h to hold a command: what names it in
// the failure.
func WaitCaptured(t testing.TB, h *faultproxy.Held, what string) {
	t.Helper()
	select {
	case <-h.Captured():
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s was held", what)
	}
}

// Proxied is a Redis reached two ways: through a fault proxy (Via), and
// directly (Direct, the observer, which no fault touches).
type Proxied struct {
	Proxy  *faultproxy.Proxy
	Via    *redis.Client
	Direct *redis.Client
	// Answered counts the commands Via answered without error.
	Answered *atomic.Int64
}

// StartProxied starts a server and a fault proxy in front of it.
func StartProxied(t testing.TB) Proxied {
	t.Helper()
	srv := Start(t)
	p := faultproxy.Start(t, srv.Addr)
	via := redis.NewClient(ClientOptions(p.Addr()))
	t.Cleanup(func() { _ = via.Close() })
	// A connection's handshake is a command too: have one open before a
	// test holds "the next command".
	if err := via.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	px := Proxied{Proxy: p, Via: via, Direct: srv.Client(t), Answered: new(atomic.Int64)}
	via.AddHook(CommandHook{Answered: func(_ redis.Cmder, err error) {
		if err == nil {
			px.Answered.Add(1)
		}
	}})
	return px
}

// HoldNext holds the next command sent through the proxy and returns a
// func that lets it land once the client has given up on it and closed its
// connection.
func (px Proxied) HoldNext(t testing.TB) (land func()) {
	t.Helper()
	h := px.Proxy.HoldNext(faultproxy.Upstream)
	t.Cleanup(h.Release)
	return func() {
		t.Helper()
		WaitCaptured(t, h, "command")
		select {
		case <-h.Conn().ClientClosed():
		case <-time.After(5 * time.Second):
			t.Fatal("the client kept the connection of the held command")
		}
		h.Release()
	}
}

// Settle waits until Redis has run whatever a released hold let through:
// a command sent after it on the same server runs after it.
func Settle(t testing.TB, c *redis.Client) {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}
