package core

import (
	"context"
	"sync"
)

// lateGrants covers the one gap that answering on a quorum opens: an
// acquire returns once a majority granted it, while the slower nodes are
// still being asked. Normally their grants land first and the release,
// which goes to every node, takes them back. But a node that is slow enough
// may run the acquire after the release: it would then keep a lock nobody
// holds until the lease runs out. So every acquire is tracked until all its
// nodes have answered, a release marks it, and a grant that arrives for a
// released lock is taken back on that node at once.
type lateGrants struct {
	mu      sync.Mutex
	byToken map[string]*lateGrant
}

type lateGrant struct {
	left     int // nodes whose answer is not in yet
	released bool
}

// track starts following an acquire with token over n nodes.
func (g *lateGrants) track(token string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byToken == nil {
		g.byToken = make(map[string]*lateGrant)
	}
	g.byToken[token] = &lateGrant{left: n}
}

// answered records one node's answer and reports whether that node granted
// a lock that has been released since, and must take it back.
func (g *lateGrants) answered(token string, granted bool) (takeBack bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	lg := g.byToken[token]
	if lg == nil {
		return false
	}
	if lg.left--; lg.left == 0 {
		delete(g.byToken, token)
	}
	return granted && lg.released
}

// released marks the acquire with token released, if nodes are still out.
// It must run before the release is sent, so that a grant that lands after
// the release on its node is seen as late by answered.
func (g *lateGrants) released(token string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if lg := g.byToken[token]; lg != nil {
		lg.released = true
	}
}

// takeBack releases on node n a grant that came in after its lock was
// released, on a context of its own: the caller is long gone.
func (s *RedlockStore) takeBack(n *RedisStore, key, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.nodeTimeout)
	defer cancel()
	_ = n.Release(ctx, key, token)
}
