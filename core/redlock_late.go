package core

import (
	"context"
	"errors"
	"sync"
)

// lateGrants covers the one gap that answering on a quorum opens: an
// acquire returns once a majority granted it, while the slower nodes are
// still being asked. Normally their grants land first and the release,
// which goes to every node, deletes them. But a node that is slow enough
// may run the acquire after the release: it would then keep a lock nobody
// holds until the lease runs out.
//
// So every acquire is tracked until all of its nodes have answered and,
// once it is released, until all of them have answered the release too.
// A node whose grant the release did not delete there is asked again: the
// release found nothing (it ran first), or it failed and the grant came in
// after the release was sent. A release that deleted the grant, the common
// case, costs nothing more.
type lateGrants struct {
	mu      sync.Mutex
	byToken map[string]*lateGrant
}

type lateGrant struct {
	nodes    []lateNode
	waiting  int // answers not in yet: acquires, and releases once released
	released bool
}

// lateNode is what one node has answered for one token.
type lateNode struct {
	acquired   bool // its acquire answer is in
	granted    bool
	grantLate  bool // the grant came in after the release was sent
	releaseIn  bool // its release answer is in
	releaseErr bool // the release failed: whether it deleted is unknown
	deleted    bool
}

// takeBack reports whether the node kept a grant that the release did not
// delete, once both answers are in.
func (n *lateNode) takeBack() bool {
	if !n.acquired || !n.releaseIn || !n.granted || n.deleted {
		return false
	}
	// A release that failed may have run after the grant and deleted it;
	// ask again only for a grant that surely came after the release was
	// sent: a node that fails to answer releases would fail this too.
	return !n.releaseErr || n.grantLate
}

// track starts following an acquire with token over n nodes.
func (g *lateGrants) track(token string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byToken == nil {
		g.byToken = make(map[string]*lateGrant)
	}
	g.byToken[token] = &lateGrant{nodes: make([]lateNode, n), waiting: n}
}

// acquired records node i's answer to the acquire with token and reports
// whether the lock must be taken back on that node.
func (g *lateGrants) acquired(token string, i int, granted bool) (takeBack bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	lg := g.byToken[token]
	if lg == nil {
		return false
	}
	n := &lg.nodes[i]
	n.acquired, n.granted, n.grantLate = true, granted, granted && lg.released
	g.answeredLocked(token, lg)
	return n.takeBack()
}

// releasing marks the acquire with token released, if any answer is still
// out, and reports whether its release answers are to be recorded. It must
// run before the release is sent, so that a grant landing after the release
// is seen as late.
func (g *lateGrants) releasing(token string) (tracked bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	lg := g.byToken[token]
	if lg == nil || lg.released {
		return false
	}
	lg.released = true
	lg.waiting += len(lg.nodes)
	return true
}

// releasedOn records node i's answer to the release (nil: deleted) and
// reports whether the lock must be taken back on that node.
func (g *lateGrants) releasedOn(token string, i int, err error) (takeBack bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	lg := g.byToken[token]
	if lg == nil {
		return false
	}
	n := &lg.nodes[i]
	n.releaseIn, n.deleted = true, err == nil
	n.releaseErr = err != nil && !errors.Is(err, ErrNotHeld)
	g.answeredLocked(token, lg)
	return n.takeBack()
}

// answeredLocked counts one answer in and forgets token after the last.
func (g *lateGrants) answeredLocked(token string, lg *lateGrant) {
	if lg.waiting--; lg.waiting == 0 {
		delete(g.byToken, token)
	}
}

// takeBack releases on node n a grant that outlived its lock's release, on
// a context of its own: the caller is long gone.
func (s *RedlockStore) takeBack(n *RedisStore, key, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.nodeTimeout)
	defer cancel()
	_ = n.Release(ctx, key, token)
}
