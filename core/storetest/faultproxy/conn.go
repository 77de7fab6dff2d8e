package faultproxy

import (
	"net"
	"sync"
	"time"
)

// Conn is one proxied connection: the client's socket, the proxy's socket to
// the target, and a pipe each way. Its methods fault this connection only.
type Conn struct {
	p            *Proxy
	client, srv  *net.TCPConn
	pipes        [2]*pipe // indexed by Direction
	cut          chan struct{}
	cutOnce      sync.Once
	closeOnce    sync.Once
	mu           sync.Mutex
	writersAlive int
}

func newConn(p *Proxy, client, srv *net.TCPConn, def [2]faults) *Conn {
	c := &Conn{p: p, client: client, srv: srv, cut: make(chan struct{}), writersAlive: 2}
	c.pipes[Upstream] = newPipe(c, Upstream, client, srv, def[Upstream])
	c.pipes[Downstream] = newPipe(c, Downstream, srv, client, def[Downstream])
	return c
}

// start runs the four goroutines; the caller has added them to p.wg.
func (c *Conn) start() {
	for _, pp := range c.pipes {
		go pp.read()
		go pp.write()
	}
}

// ClientAddr is the client's address as the proxy sees it (the client's
// local address), to tell connections apart.
func (c *Conn) ClientAddr() string { return c.client.RemoteAddr().String() }

// ClientClosed is closed once the client side stopped sending (it closed or
// half-closed its socket, or the connection was cut). Bytes still queued
// upstream are delivered after this, which is the point: a test waits here
// to know the client has given up before it releases a held command.
func (c *Conn) ClientClosed() <-chan struct{} { return c.pipes[Upstream].srcDone }

// Delay forwards each chunk read in dir d after it was read, in order.
// Zero clears the delay (chunks already due go at once).
func (c *Conn) Delay(dir Direction, d time.Duration) {
	c.pipes[dir].update(func(p *pipe) { p.delay = max(d, 0) })
}

// Hold keeps what is read in dir without forwarding it, until Release.
func (c *Conn) Hold(dir Direction) { c.pipes[dir].update(func(p *pipe) { p.hold = true }) }

// Release forwards everything held in dir, in order (also HoldNext captures
// on this connection), then lets bytes flow.
func (c *Conn) Release(dir Direction) { c.pipes[dir].release() }

// Drop discards what is read in dir from now on; the connection stays up.
func (c *Conn) Drop(dir Direction) { c.pipes[dir].update(func(p *pipe) { p.drop = true }) }

// Heal clears this connection's faults in both directions, releasing held bytes.
func (c *Conn) Heal() {
	for _, pp := range c.pipes {
		pp.heal()
	}
}

// Cut closes both sockets at once with a reset, discarding queued bytes, as
// a network that fails mid-conversation would.
func (c *Conn) Cut() {
	c.cutOnce.Do(func() {
		close(c.cut)
		// Linger 0: a RST, so even bytes in the kernel's send buffer are lost.
		_ = c.client.SetLinger(0)
		_ = c.srv.SetLinger(0)
		c.close()
	})
}

// writerDone is called by each writer as it ends. When both have ended,
// every accepted byte was delivered (or could not be), so the sockets close.
func (c *Conn) writerDone() {
	c.mu.Lock()
	c.writersAlive--
	last := c.writersAlive == 0
	c.mu.Unlock()
	if last {
		c.close()
	}
}

// close closes both sockets, which also ends both readers, and forgets c.
func (c *Conn) close() {
	c.closeOnce.Do(func() {
		_ = c.client.Close()
		_ = c.srv.Close()
		c.p.forget(c)
	})
}
