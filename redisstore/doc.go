// Package redisstore keeps reqlock's locks in Redis: one server, a
// Cluster, or a Sentinel failover client, through redis.UniversalClient.
// Build a store with New and hand it to core.NewLocker.
//
// Every operation is one Lua script and one round trip (the scripts are
// plain .lua files under internal/node/lua): acquire sets the lock with
// SET NX PX and hands out a fence that never goes backwards, also across a
// restart without persistence; extend and release compare the token first;
// a release hands the lock to the head of the key's line of waiters and
// wakes its Locker through pub/sub. Every key of a lock (the lock, its
// fence counter, its line, its record, its cancel markers) shares one
// {hash tag}, so the scripts run on a Cluster.
//
// It implements the whole contract of package core/store: Canceler (an
// acquire that lands after its caller gave up takes nothing), Recorder,
// Waker and Granter (lines and hand-offs), Inspector, Kinder and
// Durability. WithReplicaAcks adds a WAIT for replicas to every acquire.
//
// Package redisstore/redlock runs the same scripts on several independent
// masters.
package redisstore
