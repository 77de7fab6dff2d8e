package core

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// fanOut runs op against every node at once, one goroutine each, and
// collects the answers that arrive within timeout (or before ctx ends). A
// dead or paused node therefore costs at most timeout and never delays the
// others. A node that has not answered by then gets late's value; its
// goroutine ends on its own (at once when the client has
// ContextTimeoutEnabled, since its context is cancelled here) and its answer
// is dropped into a buffered channel nobody reads.
func fanOut[T any](ctx context.Context, nodes []*RedisStore, timeout time.Duration,
	op func(context.Context, *RedisStore) T, late func(error) T) []T {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	type answer struct {
		i int
		v T
	}
	ch := make(chan answer, len(nodes)) // buffered: a late answer never blocks
	for i, n := range nodes {
		go func() { ch <- answer{i, op(ctx, n)} }()
	}

	out := make([]T, len(nodes))
	answered := make([]bool, len(nodes))
	for range nodes {
		select {
		case a := <-ch:
			out[a.i], answered[a.i] = a.v, true
		case <-ctx.Done():
			for drained := false; !drained; { // answers that raced the deadline still count
				select {
				case a := <-ch:
					out[a.i], answered[a.i] = a.v, true
				default:
					drained = true
				}
			}
			err := fmt.Errorf("no answer within %v: %w", timeout, ctx.Err())
			for i := range out {
				if !answered[i] {
					out[i] = late(err)
				}
			}
			return out
		}
	}
	return out
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
