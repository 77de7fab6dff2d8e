package faultproxy_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
)

func TestForwardsAndHalfCloses(t *testing.T) {
	p := faultproxy.Start(t, startServer(t, echo))
	c := dial(t, p.Addr())
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	_ = c.CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "hello" {
		t.Fatalf("got %q, %v; want hello", got, err)
	}
	waitFor(t, "the connection to be forgotten", func() bool { return len(p.Conns()) == 0 })
	if p.Accepted() != 1 {
		t.Fatalf("Accepted = %d, want 1", p.Accepted())
	}
}

func TestHoldKeepsOrderAcrossChunks(t *testing.T) {
	p := faultproxy.Start(t, startServer(t, echo))
	c := dial(t, p.Addr())
	if _, err := c.Write([]byte("x")); err != nil { // the connection exists before Hold
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	p.Hold(faultproxy.Upstream)
	var want bytes.Buffer
	for i := range 5 {
		b := []byte{'a' + byte(i)}
		want.Write(b)
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // separate reads in the proxy
	}
	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, _ := c.Read(make([]byte, 1)); n != 0 {
		t.Fatal("bytes got through a Hold")
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	p.Release(faultproxy.Upstream)
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(c, got); err != nil || string(got) != want.String() {
		t.Fatalf("got %q, %v; want %q", got, err, want.String())
	}
}

func TestDelayKeepsOrderAndCountsFromArrival(t *testing.T) {
	p := faultproxy.Start(t, startServer(t, echo))
	const d = 100 * time.Millisecond
	p.Delay(faultproxy.Downstream, d) // a default for the connection dialled next
	c := dial(t, p.Addr())
	start := time.Now()
	for _, s := range []string{"a", "b", "c"} {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := make([]byte, 3)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "abc" {
		t.Fatalf("got %q, %v; want abc", got, err)
	}
	if el := time.Since(start); el < d {
		t.Fatalf("echo took %v, want at least %v", el, d)
	}
}

// A server that answers and closes at once: the delayed answer still reaches
// the client, and only then does the client see EOF.
func TestServerCloseDeliversPendingDownstream(t *testing.T) {
	addr := startServer(t, func(c net.Conn) { _, _ = c.Write([]byte("bye")) })
	p := faultproxy.Start(t, addr)
	p.Delay(faultproxy.Downstream, 100*time.Millisecond)
	c := dial(t, p.Addr())
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "bye" {
		t.Fatalf("got %q, %v; want bye then EOF", got, err)
	}
}

// The client writes and closes fully while its bytes are held; Release still
// delivers them to the server.
func TestClientCloseDeliversHeldUpstream(t *testing.T) {
	got := make(chan string, 1)
	addr := startServer(t, func(c net.Conn) {
		b, _ := io.ReadAll(c)
		got <- string(b)
	})
	p := faultproxy.Start(t, addr)
	h := p.HoldNext(faultproxy.Upstream)
	c := dial(t, p.Addr())
	if _, err := c.Write([]byte("late")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	select {
	case <-h.Conn().ClientClosed():
	case <-ctx.Done():
		t.Fatal("the proxy did not see the client close")
	}
	select {
	case s := <-got:
		t.Fatalf("server got %q before Release", s)
	case <-time.After(50 * time.Millisecond):
	}
	h.Release()
	select {
	case s := <-got:
		if s != "late" {
			t.Fatalf("server got %q, want late", s)
		}
	case <-ctx.Done():
		t.Fatal("held bytes never reached the server")
	}
}

func TestDropIsABlackHole(t *testing.T) {
	p := faultproxy.Start(t, startServer(t, echo))
	c := dial(t, p.Addr())
	p.Drop(faultproxy.Upstream)
	if _, err := c.Write([]byte("lost")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := c.Read(make([]byte, 8)); n != 0 || !isTimeout(err) {
		t.Fatalf("read %d, %v; want a timeout (connection up, nothing back)", n, err)
	}
	p.Heal()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ok")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 2)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "ok" {
		t.Fatalf("got %q, %v; want ok (the dropped bytes gone)", got, err)
	}
}

func TestCutResetsBothSides(t *testing.T) {
	serverSaw := make(chan error, 1)
	addr := startServer(t, func(c net.Conn) {
		_, err := io.Copy(io.Discard, c)
		serverSaw <- err
	})
	p := faultproxy.Start(t, addr)
	c := dial(t, p.Addr())
	waitFor(t, "the connection", func() bool { return len(p.Conns()) == 1 })
	p.Cut()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("client read succeeded after Cut")
	}
	select {
	case <-serverSaw:
	case <-time.After(2 * time.Second):
		t.Fatal("server side still open after Cut")
	}
	if n := len(p.Conns()); n != 0 {
		t.Fatalf("%d live connections after Cut", n)
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	p, err := faultproxy.New(startServer(t, echo))
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, p.Addr())
	p.Hold(faultproxy.Upstream)
	_, _ = c.Write([]byte("held forever"))
	p.Close()
	p.Close()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection still up after Close")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
