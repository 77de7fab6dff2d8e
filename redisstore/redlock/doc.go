// Package redlock keeps reqlock's locks on several independent Redis
// masters, the Redlock algorithm: a lock is held when a majority of the
// masters granted it within its validity. Build a store with New and hand
// it to core.NewLocker.
//
// Every operation goes to all masters at once, one script per master (the
// scripts of package redisstore), each bounded by the node timeout; an
// acquire that wins no majority, or wins it too late, is cancelled on every
// master, including the ones whose answer has not come yet. Fences are the
// greatest any master handed out, each at least this process's clock in
// µs, so that fences from different masters are comparable.
//
// It implements Canceler, Waker (a release tells every waiter; nobody is
// handed the lock, since one master's hand-off is no majority) and
// Inspector. It keeps no records: a record read from one majority may be
// missing from the next.
package redlock
