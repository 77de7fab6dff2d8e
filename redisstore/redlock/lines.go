package redlock

import (
	"context"
	"sync"

	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// lineJoins covers a waiter's acquire on Redlock that wins on a quorum
// while some nodes still held the lock (their release was on its way): on
// those nodes the waiter joined the line. Left there, it would show in
// Inspect as waiting and be told of the next releases there, long after
// it stopped waiting. So once the acquire is decided and won, the waiter
// leaves the line on each node that turned it away, also on one that
// answers after the decision.
type lineJoins struct {
	mu      sync.Mutex
	decided bool
	won     bool
	taken   []*node.Node // nodes that turned the waiter away before the decision
}

// joined records that node n turned the waiter away, and so put it in line.
func (j *lineJoins) joined(n *node.Node, s *Store, key, waiter string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.decided {
		j.taken = append(j.taken, n)
		return
	}
	if j.won {
		go s.leaveOn(n, key, waiter)
	}
}

// decide records the acquire's outcome and takes the waiter out of the lines
// it joined if it won.
func (j *lineJoins) decide(won bool, s *Store, key, waiter string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.decided, j.won = true, won
	if won {
		for _, n := range j.taken {
			go s.leaveOn(n, key, waiter)
		}
	}
	j.taken = nil
}

// leaveOn takes waiter out of key's line on node n, on a context of its own
// and bounded: the acquire that put it there is over.
func (s *Store) leaveOn(n *node.Node, key, waiter string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.nodeTimeout)
	defer cancel()
	_ = n.Leave(ctx, key, waiter)
}
