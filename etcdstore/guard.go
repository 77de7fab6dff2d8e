package etcdstore

import (
	"github.com/reqlock/reqlock/core"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Guard returns a comparison for the caller's own transaction that holds
// only while l holds its key: the create revision of the key l holds the
// lock under (the lock's key, or the line key of a waiter that holds it by
// heading the line) is l's fence. A write made under it commits only under
// the lock,
//
//	c.Txn(ctx).If(store.Guard(l)).Then(clientv3.OpPut("balance", "10")).Commit()
//
// and does not commit (the response's Succeeded is false) once the lock
// expired, was released or passed to another holder, however late the
// transaction lands. l must come from a Locker on this Store; for any
// other lock, or one released already, the comparison never holds.
func (s *Store) Guard(l *core.Lock) clientv3.Cmp {
	if l != nil {
		if h, ok := s.held.get(l.Token()); ok && h.fence == int64(l.Fence()) {
			return clientv3.Compare(clientv3.CreateRevision(h.key), "=", h.fence)
		}
	}
	// No key's version is ever negative.
	return clientv3.Compare(clientv3.Version(neverKey), "<", 0)
}

// neverKey is a key Guard compares when it knows no lock: any would do.
const neverKey = "\x00etcdstore-no-lock"
