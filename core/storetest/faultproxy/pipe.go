package faultproxy

import (
	"net"
	"sync"
	"time"
)

// chunk is one Read from the source side, stamped with when it was read so
// a delay counts from arrival, not from when the writer got to it.
type chunk struct {
	at   time.Time
	b    []byte
	gate *Held // non-nil: captured by HoldNext; waits for gate.Release
}

// pipe moves one direction of one connection. A reader goroutine reads the
// source into a queue; a writer goroutine forwards the queue to the
// destination when faults allow. Keeping them apart is what lets the reader
// see the source close while the writer still owes the destination bytes:
// the writer drains the queue first, then half-closes the destination.
type pipe struct {
	c        *Conn
	dir      Direction
	src, dst *net.TCPConn

	wake    chan struct{} // capacity 1: "state changed, look again"
	srcDone chan struct{} // closed when the reader stops

	mu     sync.Mutex
	q      []chunk
	delay  time.Duration
	hold   bool
	drop   bool
	eof    bool // the reader has stopped; nothing more will be queued
	broken bool // a write to dst failed; the rest is discarded
}

func newPipe(c *Conn, dir Direction, src, dst *net.TCPConn, f faults) *pipe {
	return &pipe{
		c: c, dir: dir, src: src, dst: dst,
		wake:    make(chan struct{}, 1),
		srcDone: make(chan struct{}),
		delay:   f.delay, hold: f.hold, drop: f.drop,
	}
}

// notify wakes the writer without blocking; one pending wake-up is enough
// because the writer re-reads the whole state each time.
func (p *pipe) notify() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// update changes the faults under the lock and wakes the writer.
func (p *pipe) update(f func(p *pipe)) {
	p.mu.Lock()
	f(p)
	p.mu.Unlock()
	p.notify()
}

// release lifts a Hold and every HoldNext capture still queued here.
func (p *pipe) release() {
	p.update(func(p *pipe) {
		p.hold = false
		for _, ch := range p.q {
			if ch.gate != nil {
				ch.gate.released.Store(true)
			}
		}
	})
}

// heal clears every fault of this pipe, releasing what is held.
func (p *pipe) heal() {
	p.release()
	p.update(func(p *pipe) { p.delay, p.drop = 0, false })
}

// read runs until the source fails or closes (EOF, reset, or Cut).
func (p *pipe) read() {
	defer p.c.p.wg.Done()
	defer func() {
		p.mu.Lock()
		p.eof = true
		p.mu.Unlock()
		close(p.srcDone)
		p.notify()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := p.src.Read(buf)
		if n > 0 {
			p.accept(time.Now(), buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// accept queues what was read, unless this direction drops it.
func (p *pipe) accept(at time.Time, b []byte) {
	p.mu.Lock()
	drop := p.drop
	p.mu.Unlock()
	if drop {
		return
	}
	b = append([]byte(nil), b...)
	// Claim outside p.mu: the proxy's lock is taken before a pipe's.
	gate := p.c.p.claim(p.dir, p.c, b)
	p.mu.Lock()
	p.q = append(p.q, chunk{at: at, b: b, gate: gate})
	p.mu.Unlock()
	p.notify()
}

// write runs until the queue is drained after the source stopped, or the
// connection is cut. Order is kept: a held or delayed chunk blocks the ones
// behind it.
func (p *pipe) write() {
	defer p.c.p.wg.Done()
	defer p.c.writerDone()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-p.c.cut:
			return
		default:
		}
		p.mu.Lock()
		var wait time.Duration = -1 // -1: wait for a wake-up only
		switch {
		case len(p.q) > 0 && !p.hold && (p.q[0].gate == nil || p.q[0].gate.released.Load()):
			if wait = time.Until(p.q[0].at.Add(p.delay)); wait <= 0 {
				ch := p.q[0]
				p.q[0] = chunk{}
				p.q = p.q[1:]
				broken := p.broken
				p.mu.Unlock()
				if !broken {
					if _, err := p.dst.Write(ch.b); err != nil {
						p.mu.Lock()
						p.broken = true
						p.mu.Unlock()
					}
				}
				continue
			}
		case len(p.q) == 0 && p.eof:
			broken := p.broken
			p.mu.Unlock()
			if !broken {
				// Half-close: the peer sees EOF after the last byte, and the
				// other direction keeps flowing (Redis still answers).
				_ = p.dst.CloseWrite()
			}
			return
		}
		p.mu.Unlock()
		if wait < 0 {
			select {
			case <-p.wake:
			case <-p.c.cut:
			}
			continue
		}
		timer.Reset(wait)
		select {
		case <-p.wake:
		case <-timer.C:
		case <-p.c.cut:
		}
	}
}
