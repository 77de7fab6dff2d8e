// Package outage words a network store's failure so that a person reading
// the log knows what to check: which server, at which address, and whether
// it refused connections, closed one, or went silent, with the cause kept
// for errors.Is (syscall.ECONNREFUSED, context.DeadlineExceeded).
//
// A client often reports only its side of an outage (a deadline, an
// unexpected EOF); Explain then dials the server once to tell a server that
// is down (refused) from one that is up but silent (paused, hung).
package outage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// probeTimeout bounds the dial that tells refused from silent: short, as it
// runs after the caller's deadline.
const probeTimeout = 100 * time.Millisecond

// probeMemory is how long one probe's answer serves the errors of one
// address, so that an outage costs a dial a second, not one per failure.
const probeMemory = time.Second

// ErrConnLost marks a client's error that says its connection to the
// server broke, in words of its own (gRPC's Unavailable, say): Explain
// treats it as a connection closed.
var ErrConnLost = errors.New("connection to the server lost")

var (
	mu     sync.Mutex
	probes = map[string]probe{}
)

type probe struct {
	err error // nil: the server accepted a connection
	at  time.Time
}

// Explain returns err with which server (name, "PostgreSQL" say) at addr
// failed and how; err itself when it is no outage (an answer of the
// server, a caller that gave up).
func Explain(name, addr string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	if _, done := errors.AsType[*explained](err); done {
		return err
	}
	where := name + " at " + addr
	if errors.Is(err, syscall.ECONNREFUSED) {
		return &explained{fmt.Errorf("%s refused the connection: %w", where, err)}
	}
	silent := errors.Is(err, context.DeadlineExceeded) || isTimeout(err)
	closed := errors.Is(err, ErrConnLost) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
	if !silent && !closed {
		return err
	}
	if !errors.Is(err, context.DeadlineExceeded) && silent {
		err = fmt.Errorf("%w: %w", err, context.DeadlineExceeded)
	}
	switch perr := dial(addr); {
	case errors.Is(perr, syscall.ECONNREFUSED):
		err = fmt.Errorf("%s refuses connections (%w): %w", where, perr, err)
	case perr != nil:
		err = fmt.Errorf("%s does not answer, not even a connection (%w): %w", where, perr, err)
	case closed:
		err = fmt.Errorf("%s closed the connection: %w", where, err)
	default:
		err = fmt.Errorf("%s accepts connections but did not answer before the deadline: %w", where, err)
	}
	return &explained{err}
}

// explained is an error Explain has worded: an error that passes through
// it again (a store's failure wrapping another's) is left as it is.
type explained struct{ error }

func (e *explained) Unwrap() error { return e.error }

func isTimeout(err error) bool {
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}

// dial connects to addr and hangs up, or says why it could not, reusing an
// answer younger than probeMemory.
func dial(addr string) error {
	mu.Lock()
	p, ok := probes[addr]
	mu.Unlock()
	if ok && time.Since(p.at) < probeMemory {
		return p.err
	}
	c, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err == nil {
		_ = c.Close()
	}
	mu.Lock()
	if len(probes) > 64 { // addresses come from configuration: few
		clear(probes)
	}
	probes[addr] = probe{err: err, at: time.Now()}
	mu.Unlock()
	return err
}
