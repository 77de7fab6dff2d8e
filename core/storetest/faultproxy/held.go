package faultproxy

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// Held is one HoldNext: the next chunk read in its direction, on whichever
// connection reads first, is kept until Release. Chunks read after it on the
// same connection wait behind it (order is kept); other connections flow.
type Held struct {
	p        *Proxy
	dir      Direction
	captured chan struct{} // closed when a chunk was captured
	released atomic.Bool

	mu   sync.Mutex
	conn *Conn
	data []byte
}

// HoldNext holds exactly the next chunk read in dir, so a test can hold one
// command: the chunk stays in the proxy until h.Release, and is delivered
// then even if its sender has closed the connection meanwhile.
//
// A fresh go-redis connection first sends its handshake (HELLO and the
// like); issue one command on it before HoldNext so the next chunk is the
// command meant to be held.
func (p *Proxy) HoldNext(dir Direction) *Held {
	h := &Held{p: p, dir: dir, captured: make(chan struct{})}
	p.mu.Lock()
	p.armed[dir] = append(p.armed[dir], h)
	p.mu.Unlock()
	return h
}

// claim hands a chunk just read on c in dir to the oldest armed HoldNext,
// if any, and returns it as the chunk's gate.
func (p *Proxy) claim(dir Direction, c *Conn, b []byte) *Held {
	p.mu.Lock()
	if len(p.armed[dir]) == 0 {
		p.mu.Unlock()
		return nil
	}
	h := p.armed[dir][0]
	p.armed[dir] = slices.Delete(p.armed[dir], 0, 1)
	p.mu.Unlock()
	h.mu.Lock()
	h.conn, h.data = c, b
	h.mu.Unlock()
	close(h.captured)
	return h
}

// Wait blocks until a chunk was captured, or returns ctx's error.
func (h *Held) Wait(ctx context.Context) error {
	select {
	case <-h.captured:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Captured is closed once a chunk was captured.
func (h *Held) Captured() <-chan struct{} { return h.captured }

// Conn is the connection the chunk was captured on (nil before).
func (h *Held) Conn() *Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conn
}

// Bytes is a copy of the captured chunk (nil before), to check it is the
// command the test meant to hold.
func (h *Held) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.data)
}

// Release forwards the captured bytes and whatever queued behind them, even
// if the sender has closed since. Before a capture it disarms the HoldNext.
// It is idempotent.
func (h *Held) Release() {
	h.released.Store(true)
	h.p.mu.Lock()
	h.p.armed[h.dir] = slices.DeleteFunc(h.p.armed[h.dir], func(x *Held) bool { return x == h })
	h.p.mu.Unlock()
	if c := h.Conn(); c != nil {
		c.pipes[h.dir].notify()
	}
}
