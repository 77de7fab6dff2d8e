package redlock

import (
	"context"
	"sync"

	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// lateGrants covers the one gap that answering on a quorum opens: an
// acquire returns once a majority granted it, while the slower nodes are
// still being asked. Normally their grants land first and the release,
// which goes to every node, deletes them. But a node that is slow enough
// may run the acquire after the release: it would then keep a lock nobody
// holds until the lease runs out.
//
// So every acquire is tracked until all of its nodes have answered and,
// once it is released, until all of them have answered the release too. A
// node whose grant answered only after the release was sent, and whose
// release did not delete it (found nothing, or failed), is asked again. A
// grant that answered before the release was sent ran before it, so the
// release saw it; and a release that deleted the grant, the common case,
// costs nothing more.
//
// A node that never answered its acquire (it timed out) is not covered: it
// may still run the acquire later and keep that copy until the lease ends.
type lateGrants struct {
	mu      sync.Mutex
	byLease map[leaseID]*lateGrant
}

// leaseID names one acquire: a token is unique to its caller, but a caller
// of the Store may send it again, or use it on two keys.
type leaseID struct{ key, token string }

type lateGrant struct {
	id       leaseID
	nodes    []lateNode
	waiting  int // answers not in yet: acquires, and releases once released
	released bool
}

// lateNode is what one node has answered for one acquire.
type lateNode struct {
	grantLate bool // it granted, and said so after the release was sent
	releaseIn bool // its release answer is in
	deleted   bool // the release deleted the lock
}

// takeBack reports whether the node may keep a grant that the release did
// not delete, once both answers are in.
func (n *lateNode) takeBack() bool { return n.grantLate && n.releaseIn && !n.deleted }

// track starts following an acquire of key with token over n nodes. A new
// acquire with the same key and token takes over from an older one, whose
// answers then go unrecorded.
func (g *lateGrants) track(key, token string, n int) *lateGrant {
	lg := &lateGrant{id: leaseID{key, token}, nodes: make([]lateNode, n), waiting: n}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byLease == nil {
		g.byLease = make(map[leaseID]*lateGrant)
	}
	g.byLease[lg.id] = lg
	return lg
}

// acquired records node i's answer to the acquire lg and reports whether
// the lock must be taken back on that node.
func (g *lateGrants) acquired(lg *lateGrant, i int, granted bool) (takeBack bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := &lg.nodes[i]
	n.grantLate = granted && lg.released
	g.answeredLocked(lg)
	return n.takeBack()
}

// releasing marks the acquire of key with token released, if any of its
// nodes has yet to answer, and returns it so that the release's answers can
// be recorded (nil when untracked). It must run before the release is sent,
// so that a grant landing after the release is seen as late.
func (g *lateGrants) releasing(key, token string) *lateGrant {
	g.mu.Lock()
	defer g.mu.Unlock()
	lg := g.byLease[leaseID{key, token}]
	if lg == nil || lg.released {
		return nil
	}
	lg.released = true
	lg.waiting += len(lg.nodes)
	return lg
}

// releasedOn records node i's answer to the release of lg (err nil: it
// deleted the lock) and reports whether the lock must be taken back there.
func (g *lateGrants) releasedOn(lg *lateGrant, i int, err error) (takeBack bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := &lg.nodes[i]
	n.releaseIn, n.deleted = true, err == nil
	g.answeredLocked(lg)
	return n.takeBack()
}

// answeredLocked counts one answer in and forgets lg after the last.
func (g *lateGrants) answeredLocked(lg *lateGrant) {
	if lg.waiting--; lg.waiting == 0 && g.byLease[lg.id] == lg {
		delete(g.byLease, lg.id)
	}
}

// takeBack releases on node n a grant that outlived its lock's release, on
// a context of its own: the caller is long gone.
func (s *Store) takeBack(n *node.Node, key, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.nodeTimeout)
	defer cancel()
	_ = n.Release(ctx, key, token)
}
