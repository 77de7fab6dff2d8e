package fiberlock

import (
	"context"
	"net"
	"time"
)

// clientCheckEvery is how often a waiting request looks whether its client
// has left.
const clientCheckEvery = 20 * time.Millisecond

// watchClient returns ctx cancelled when the client at the other end of
// conn leaves (its connection reads end-of-file or is reset), as net/http
// cancels a request's context, until stop is called. fasthttp neither
// tells a handler nor reads the connection while it runs, so the watch
// peeks at the socket without taking a byte from it. On a connection that
// cannot be peeked at (TLS, another OS), ctx is returned as it is.
func watchClient(ctx context.Context, conn net.Conn) (context.Context, context.CancelFunc) {
	peek, ok := peeker(conn)
	if !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(clientCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if peek() {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}
