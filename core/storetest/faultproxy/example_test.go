package faultproxy_test

import (
	"fmt"
	"io"
	"net"
	"time"

	"github.com/reqlock/reqlock/core/storetest/faultproxy"
)

// A held request is delivered after its client has closed the connection.
// Tests use Start(t, addr), which closes the proxy at cleanup; New is the
// same without a testing.TB.
func Example() {
	// A tiny loopback server that prints what it receives.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	received := make(chan string)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		received <- string(b)
	}()

	p, _ := faultproxy.New(ln.Addr().String())
	defer p.Close()
	p.Delay(faultproxy.Downstream, 10*time.Millisecond)
	held := p.HoldNext(faultproxy.Upstream)

	c, _ := net.Dial("tcp", p.Addr())
	_, _ = c.Write([]byte("SET k v"))
	_ = c.Close() // the client gives up

	<-held.Captured()
	<-held.Conn().ClientClosed()
	fmt.Println("client closed, server has nothing yet")
	held.Release()
	fmt.Println("server received:", <-received)
	// Output:
	// client closed, server has nothing yet
	// server received: SET k v
}
