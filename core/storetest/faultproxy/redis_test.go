package faultproxy_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/redistest"
)

// redisThrough starts Redis and a proxy in front of it and returns the
// proxy, a client through it and a direct client.
func redisThrough(t *testing.T) (*faultproxy.Proxy, *redis.Client, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	return p, newClient(t, p.Addr()), srv.Client(t)
}

func newClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(redistest.ClientOptions(addr))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func warm(t *testing.T, c *redis.Client) {
	t.Helper()
	if err := c.Ping(ctxFor(t, 2*time.Second)).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
}

func TestRedisDelay(t *testing.T) {
	p, via, _ := redisThrough(t)
	warm(t, via)
	const d = 150 * time.Millisecond
	p.Delay(faultproxy.Upstream, d)
	start := time.Now()
	warm(t, via)
	if el := time.Since(start); el < d {
		t.Fatalf("PING took %v, want at least %v", el, d)
	}
	p.Delay(faultproxy.Upstream, 0)
	warm(t, via)
}

// The case the proxy exists for: a SET is held until its client has timed
// out and closed the connection, other commands go through meanwhile, and
// then the SET reaches Redis — late, from a client that gave up on it.
func TestRedisHeldCommandLandsAfterClientGaveUp(t *testing.T) {
	p, via, direct := redisThrough(t)
	warm(t, via) // the handshake is done; the next chunk is the SET

	h := p.HoldNext(faultproxy.Upstream)
	err := via.Set(ctxFor(t, 100*time.Millisecond), "k", "v", 0).Err()
	if !isTimeoutErr(err) {
		t.Fatalf("SET through a held proxy: %v, want a timeout", err)
	}
	if err := h.Wait(ctxFor(t, time.Second)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ToLower(string(h.Bytes())), "set\r\n$1\r\nk\r\n") {
		t.Fatalf("held %q, want the SET", h.Bytes())
	}
	select {
	case <-h.Conn().ClientClosed():
	case <-time.After(2 * time.Second):
		t.Fatal("go-redis did not close the timed-out connection")
	}

	if err := direct.Get(ctxFor(t, time.Second), "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET k before Release: %v, want redis.Nil", err)
	}
	// The same client carries on over a new connection.
	if err := via.Set(ctxFor(t, time.Second), "other", "1", 0).Err(); err != nil {
		t.Fatalf("SET over a new connection: %v", err)
	}
	if p.Accepted() != 2 {
		t.Fatalf("Accepted = %d, want 2", p.Accepted())
	}

	h.Release()
	waitFor(t, "the held SET to land", func() bool {
		v, err := direct.Get(ctxFor(t, time.Second), "k").Result()
		return err == nil && v == "v"
	})
	waitFor(t, "the finished connection to be forgotten", func() bool { return len(p.Conns()) == 1 })
}

func TestRedisHoldReleaseKeepsPipelineOrder(t *testing.T) {
	p, via, direct := redisThrough(t)
	warm(t, via)
	p.Hold(faultproxy.Upstream)
	done := make(chan error, 1)
	go func() {
		_, err := via.Pipelined(ctxFor(t, 3*time.Second), func(pl redis.Pipeliner) error {
			for i := range 10 {
				pl.RPush(t.Context(), "list", i)
			}
			return nil
		})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if n := direct.LLen(ctxFor(t, time.Second), "list").Val(); n != 0 {
		t.Fatalf("LLEN = %d while held, want 0", n)
	}
	p.Release(faultproxy.Upstream)
	if err := <-done; err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	got := direct.LRange(ctxFor(t, time.Second), "list", 0, -1).Val()
	if strings.Join(got, ",") != "0,1,2,3,4,5,6,7,8,9" {
		t.Fatalf("list = %v, want 0..9 in order", got)
	}
}

func TestRedisDrop(t *testing.T) {
	p, via, direct := redisThrough(t)
	warm(t, via)
	p.Drop(faultproxy.Upstream)
	if err := via.Set(ctxFor(t, 100*time.Millisecond), "k", "v", 0).Err(); !isTimeoutErr(err) {
		t.Fatalf("SET through a dropping proxy: %v, want a timeout", err)
	}
	p.Heal()
	warm(t, via)
	if err := direct.Get(ctxFor(t, time.Second), "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET k after a dropped SET: %v, want redis.Nil", err)
	}
}

func TestRedisCutFailsABlockedCommand(t *testing.T) {
	p, via, direct := redisThrough(t)
	warm(t, via)
	done := make(chan error, 1)
	go func() { done <- via.BLPop(ctxFor(t, 10*time.Second), 5*time.Second, "q").Err() }()
	waitFor(t, "BLPOP to block in Redis", func() bool {
		info := direct.Info(ctxFor(t, time.Second), "clients").Val()
		return strings.Contains(info, "blocked_clients:1")
	})
	start := time.Now()
	p.Cut()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, redis.Nil) {
			t.Fatalf("BLPOP after Cut: %v, want a connection error", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("BLPOP still blocked 2s after Cut")
	}
	t.Logf("BLPOP failed %v after Cut", time.Since(start))
	warm(t, via) // a new connection works
}

func TestRedisRefuse(t *testing.T) {
	p, live, _ := redisThrough(t)
	warm(t, live)
	p.Refuse(true)
	fresh := newClient(t, p.Addr())
	if err := fresh.Ping(ctxFor(t, 2*time.Second)).Err(); err == nil {
		t.Fatal("PING over a new connection succeeded while refusing")
	}
	if p.Refused() == 0 {
		t.Fatal("Refused = 0")
	}
	warm(t, live) // live connections are untouched
	p.Heal()
	warm(t, fresh)
}

func TestRedisPerConnectionFault(t *testing.T) {
	srv := redistest.Start(t)
	p := faultproxy.Start(t, srv.Addr)
	a, b := newClient(t, p.Addr()), newClient(t, p.Addr())
	warm(t, a)
	waitFor(t, "a's connection", func() bool { return len(p.Conns()) == 1 })
	warm(t, b)
	conns := p.Conns()
	if len(conns) != 2 {
		t.Fatalf("%d connections, want 2", len(conns))
	}
	conns[0].Hold(faultproxy.Upstream) // a's
	if err := a.Ping(ctxFor(t, 100*time.Millisecond)).Err(); !isTimeoutErr(err) {
		t.Fatalf("PING on the held connection: %v, want a timeout", err)
	}
	warm(t, b)
	conns[0].Release(faultproxy.Upstream)
	warm(t, a) // over a new connection: the old one was closed by go-redis
}

func isTimeoutErr(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}
