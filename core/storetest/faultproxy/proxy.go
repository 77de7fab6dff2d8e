package faultproxy

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"
)

// Direction is which way bytes travel through the proxy.
type Direction int

const (
	Upstream   Direction = iota // client → server
	Downstream                  // server → client
)

func (d Direction) String() string {
	switch d {
	case Upstream:
		return "upstream"
	case Downstream:
		return "downstream"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// faults are the settings a new connection starts with.
type faults struct {
	delay      time.Duration
	hold, drop bool
}

// dialTimeout bounds how long an accepted connection waits for the target.
const dialTimeout = 2 * time.Second

// Proxy accepts connections on 127.0.0.1 and forwards each to one target.
// Its fault methods apply to every live connection and are the defaults for
// connections accepted later. All methods are safe for concurrent use.
type Proxy struct {
	target string
	ln     *net.TCPListener
	ctx    context.Context // cancelled by Close; bounds dials to the target
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the proxy started
	once   sync.Once

	mu       sync.Mutex
	closed   bool
	conns    []*Conn // live, in accept order
	accepted int
	refused  int
	refuse   bool
	def      [2]faults
	armed    [2][]*Held // HoldNext waiting for a chunk, oldest first
}

// Start starts a proxy to target for the duration of the test: it is closed
// at t.Cleanup, and t fails if it cannot listen.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := New(target)
	if err != nil {
		t.Fatalf("faultproxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// New starts a proxy to target; the caller must Close it. Tests use Start.
func New(target string) (*Proxy, error) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	p := &Proxy{target: target, ln: ln}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the address clients dial instead of the target (127.0.0.1:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops listening, cuts every connection and waits for every goroutine
// the proxy started. It is idempotent.
func (p *Proxy) Close() {
	p.once.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.cancel()
		_ = p.ln.Close()
		p.Cut()
		p.wg.Wait()
	})
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		client, err := p.ln.AcceptTCP()
		if err != nil {
			return // closed; on a loopback listener nothing else is expected
		}
		p.mu.Lock()
		refuse := p.refuse || p.closed
		if refuse {
			p.refused++
		}
		p.mu.Unlock()
		if refuse {
			reset(client)
			continue
		}
		var d net.Dialer
		dctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
		srv, err := d.DialContext(dctx, "tcp", p.target)
		cancel()
		if err != nil {
			reset(client) // the client sees what a dead target would show it
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			reset(client)
			reset(srv.(*net.TCPConn))
			continue
		}
		c := newConn(p, client, srv.(*net.TCPConn), p.def)
		p.conns = append(p.conns, c)
		p.accepted++
		p.wg.Add(4) // under p.mu, so Close cannot be in wg.Wait before it
		p.mu.Unlock()
		c.start()
	}
}

// reset closes c with a RST rather than a FIN.
func reset(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}

// forget drops c from the live list.
func (p *Proxy) forget(c *Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = slices.DeleteFunc(p.conns, func(x *Conn) bool { return x == c })
}

// Conns returns the live connections, in accept order.
func (p *Proxy) Conns() []*Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.conns)
}

// Accepted is how many connections were ever forwarded to the target
// (refused ones are not counted; see Refused).
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Refused is how many connections were closed at once because of Refuse.
func (p *Proxy) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// each sets the default under p.mu and applies f to every live connection.
func (p *Proxy) each(setDefault func(*[2]faults), f func(*Conn)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if setDefault != nil {
		setDefault(&p.def)
	}
	for _, c := range p.conns {
		f(c)
	}
}

// Delay forwards each chunk read in dir d after it was read, in order, on
// every connection. Zero clears the delay.
func (p *Proxy) Delay(dir Direction, d time.Duration) {
	p.each(func(f *[2]faults) { f[dir].delay = max(d, 0) }, func(c *Conn) { c.Delay(dir, d) })
}

// Hold keeps what is read in dir, forwarding nothing, until Release.
func (p *Proxy) Hold(dir Direction) {
	p.each(func(f *[2]faults) { f[dir].hold = true }, func(c *Conn) { c.Hold(dir) })
}

// Release forwards everything held in dir, in order, then lets bytes flow.
// It also releases HoldNext captures in dir and disarms HoldNext calls that
// have not captured anything yet.
func (p *Proxy) Release(dir Direction) {
	p.mu.Lock()
	armed := p.armed[dir]
	p.armed[dir] = nil
	p.mu.Unlock()
	for _, h := range armed {
		h.released.Store(true)
	}
	p.each(func(f *[2]faults) { f[dir].hold = false }, func(c *Conn) { c.Release(dir) })
}

// Drop discards what is read in dir from now on; connections stay up (a
// black hole). Heal stops it.
func (p *Proxy) Drop(dir Direction) {
	p.each(func(f *[2]faults) { f[dir].drop = true }, func(c *Conn) { c.Drop(dir) })
}

// Cut resets every live connection, both sides at once, discarding queued
// bytes. New connections are accepted as usual.
func (p *Proxy) Cut() {
	for _, c := range p.Conns() {
		c.Cut()
	}
}

// Heal clears every fault: delays, holds (held bytes are released, in
// order), HoldNext, drops and Refuse.
func (p *Proxy) Heal() {
	p.Release(Upstream)
	p.Release(Downstream)
	p.mu.Lock()
	p.refuse = false
	p.mu.Unlock()
	p.each(func(f *[2]faults) { *f = [2]faults{} }, (*Conn).Heal)
}

// Refuse makes the proxy close new connections at once with a reset, as a
// server that is down would; live connections are untouched. Dials still
// succeed (the proxy accepts, then resets): the client's first read or write
// fails instead.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = on
}
