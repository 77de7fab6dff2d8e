// Package core is reqlock's distributed lock: at most one holder per key
// across every process that shares a Store.
//
// A Locker hands out locks from a Store: RedisStore (a Redis node, Cluster or
// Sentinel), RedlockStore (several independent Redis masters) or MemoryStore
// (one process). The protocol is the classic one, done carefully:
//
//   - acquire is one script: SET key token NX PX ttl with a random 128-bit
//     token, and on success a fencing token; on failure the holder's PTTL,
//     so callers know how long to wait (ErrNotObtained, HolderTTL);
//   - release and extend are one script each and compare the token first,
//     so nobody frees or extends a lock that is not theirs (ErrNotHeld);
//   - Obtain waits with a randomized backoff (package backoff), never past
//     the holder's lease, and wakes at once on a release in the same Locker;
//   - a watchdog renews every held lock at about a third of its lease, all
//     in one batch per tick; when it cannot, the lock is lost: Lost() closes
//     and the context from Do is cancelled with cause ErrLockLost;
//   - Fence grows strictly per key across holders, also across a Redis
//     restart without persistence. Only a resource that checks fences is
//     safe from a holder that paused past its lease; pass Fence along.
//
// Keys are hashed: the store sees prefix + "{" + base64(SHA-256(key)[:16]) + "}",
// never the raw key, so user text can neither escape the namespace nor choose
// a Redis Cluster slot.
//
// Locker.Inspect says who holds a key, for how long, its last fence and how
// many wait for it, without changing anything; WithHolder names the instance
// in that answer. The reqlock command (cmd/reqlock) asks the same from a
// shell.
package core
