// Package etcdstore keeps reqlock's locks in etcd: the store for locks that
// guard correctness, where two holders at once must not happen.
//
//	cli, _ := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}})
//	store := etcdstore.New(cli)
//	locker := core.NewLocker(store)
//
// The Store implements core.Store and every optional part of the contract
// (Canceler, Recorder, Waker, Inspector), so every reqlock middleware
// (Reject, Wait, Replay) works on it unchanged. It is a module of its own:
// the etcd client and its dependencies reach only the builds that import
// it.
//
// # What etcd guarantees that Redis and Redlock do not
//
// Every lock operation is a transaction committed by a majority of etcd's
// members through Raft, and every read is linearizable. A lock granted is
// on a majority's disks; a failover, a restart or a lost member cannot hand
// it to a second holder, as a Redis failover to a replica that missed the
// write can. Exclusion itself rests on no clock: etcd orders everything by
// its revision, and the lock's fence is the revision that created the key
// (its create revision), strictly increasing across the whole cluster.
// Leases are timed by the leader, and only their lengths (not the time of
// day) are compared with the holder's clock: the holder's Lost closes
// before etcd can expire the lease, by the holder's own clock, with core's
// drift margin.
//
// # What it still cannot promise without fencing
//
// No lock service can stop a holder that is paused (a GC pause, a stopped
// process, a slow link) past its lease from acting on what it believes: by
// the time it resumes, another holds the lock. The holder learns of the
// loss from Lost as soon as it runs again, but a write already on its way
// still lands. Writes kept in etcd are made safe with Guard, a comparison
// for the caller's own transaction that holds only while the key the lock
// is held under still has the holder's fence as its create revision:
//
//	c.Txn(ctx).If(store.Guard(lock)).Then(clientv3.OpPut("balance", "10")).Commit()
//
// Writes to anything else should carry Lock.Fence and be refused below the
// highest fence seen.
//
// # What a lock costs
//
// An uncontended lock is two etcd writes: the acquire transaction and the
// release transaction. Renewal is no write: the locks of one length taken
// within a third of that length share one lease, and the watchdog's
// renewals of all of them are one keep-alive of that lease (plus a
// read-only transaction, per 128 locks, that checks the tokens). A waiter
// adds the write that puts it in line, and takes the lock with a read; a
// record is written in the release's own transaction.
//
// # Whole seconds
//
// etcd's leases are whole seconds, and at least 1.5 election timeouts (2s
// with etcd's defaults). A lock's lease is its TTL rounded up to the
// second; the holder is told it may rely on the lock for no more than its
// TTL. A lock that reaches its TTL unrenewed is deleted by its own store,
// so shorter or uneven TTLs hold while the holder's process runs; if the
// process is gone, the lease ends the lock when it runs out, up to a second
// later (more when it shares a lease taken earlier).
//
// # Keys
//
// Under the Locker's key K (its prefix and the hash of the raw key, which
// never reaches etcd): K itself is the lock, K/line/<waiter> the waiters
// in line, K/record the record, K/cancel/<hash> the cancel markers.
//
// # Waiting
//
// Waiters line up as in ZooKeeper's lock recipe: each puts a key in the
// line, on a short lease (LineTTL) its store keeps alive while it waits;
// they are served in the order etcd created those keys, and each watches
// only the key ahead of it (the head watches the lock), so a release wakes
// one waiter. The head holds the lock as soon as K is gone: nobody else
// can take it then, and it keeps it while its line key exists. It takes it
// with a read, and holds it under its line key, whose create revision is
// its fence (above every earlier holder's: it joined after they took the
// lock). A waiter whose process died leaves the line when its line lease
// runs out; a waiter whose lease etcd expired stops waiting with
// ErrLeaseExpired.
package etcdstore
