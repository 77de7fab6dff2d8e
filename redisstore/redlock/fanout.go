package redlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// fanOut runs op against every node at once, one goroutine each, and
// collects the answers that arrive within timeout (or before ctx ends). A
// dead or paused node therefore costs at most timeout and never delays the
// others. A node that has not answered by then gets late's value; its
// goroutine ends on its own (at once when the client has
// ContextTimeoutEnabled, since its context times out) and its answer is
// dropped into a buffered channel nobody reads.
//
// The calls end with ctx: for Extend, whose caller (a Refresh) takes turns
// with the watchdog's renewals, a call let run after its caller gave up
// could land after a later renewal and undo it.
func fanOut[T any](ctx context.Context, nodes []*node.Node, timeout time.Duration,
	op func(context.Context, *node.Node) T, late func(error) T) []T {
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	return collect(ctx, callCtx, cancel, nodes, timeout, op, late, nil, 0)
}

// errNotAwaited fills in the nodes fanOutUntil stopped waiting for.
var errNotAwaited = errors.New("answer not awaited: a quorum had already agreed")

// fanOutUntil is fanOut that returns as soon as need answers satisfy good:
// the slowest nodes no longer set the latency of a decision a quorum has
// made. Their entries get late(errNotAwaited).
//
// For acquires and releases. The calls run on a context of their own,
// bounded by timeout, which the caller's ending does not cut short:
// returning early must not abort the slower nodes' calls, or a release that
// a quorum answered would leave its copies on the others (a grant that lands
// late is taken back; see lateGrants). Calls still carry ctx's values.
func fanOutUntil[T any](ctx context.Context, nodes []*node.Node, timeout time.Duration,
	op func(context.Context, *node.Node) T, late func(error) T, good func(T) bool, need int) []T {
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	return collect(ctx, callCtx, cancel, nodes, timeout, op, late, good, need)
}

// collect runs op on every node under callCtx, which cancel ends, and
// gathers their answers until all are in, need of them are good (need > 0),
// or callCtx or the caller's ctx ends.
func collect[T any](ctx, callCtx context.Context, cancel context.CancelFunc, nodes []*node.Node, timeout time.Duration,
	op func(context.Context, *node.Node) T, late func(error) T, good func(T) bool, need int) []T {
	done := countdown(len(nodes), cancel) // the last call out frees the timer

	type answer struct {
		i int
		v T
	}
	ch := make(chan answer, len(nodes)) // buffered: a late answer never blocks
	for i, n := range nodes {
		go func() {
			ch <- answer{i, op(callCtx, n)}
			done()
		}()
	}

	out := make([]T, len(nodes))
	answered := make([]bool, len(nodes))
	fill := func(err error) []T {
		for i := range out {
			if !answered[i] {
				out[i] = late(err)
			}
		}
		return out
	}
	// drain takes the answers that raced the deadline (they still count) and
	// says why the others will not be awaited.
	drain := func() error {
		for {
			select {
			case a := <-ch:
				out[a.i], answered[a.i] = a.v, true
			default:
				if err := ctx.Err(); err != nil {
					return err
				}
				return callCtx.Err()
			}
		}
	}
	agreed := 0
	for range nodes {
		select {
		case a := <-ch:
			out[a.i], answered[a.i] = a.v, true
			if good != nil && good(a.v) {
				if agreed++; agreed >= need {
					return fill(errNotAwaited)
				}
			}
		case <-callCtx.Done():
			return fill(fmt.Errorf("no answer within %v: %w", timeout, drain()))
		case <-ctx.Done():
			return fill(fmt.Errorf("no answer before the caller gave up: %w", drain()))
		}
	}
	return out
}

// countdown returns a func that runs f on its n-th call.
func countdown(n int, f func()) func() {
	var left atomic.Int32
	left.Store(int32(n))
	return func() {
		if left.Add(-1) == 0 {
			f()
		}
	}
}

// quorumError is a Redlock operation that reached too few nodes: it says how
// many agreed and why each of the others failed. errors.Is sees through to
// every node's error (context.DeadlineExceeded, for one).
type quorumError struct {
	op       string
	ok, need int
	nodes    int
	errs     []error // one per failed node, already labelled with the node
}

func (e *quorumError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "reqlock: redlock %s: %d of %d nodes agreed, %d needed", e.op, e.ok, e.nodes, e.need)
	for i, err := range e.errs {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e *quorumError) Unwrap() []error { return e.errs }
