// Package safety measures reqlock's safety claims against real Redis
// servers, scenario by scenario and store by store.
//
// Workers (goroutines with a Locker each, and separate OS processes running
// this package's test binary) take a lock and do a read-modify-write on an
// Account, a loopback HTTP resource that checks fences. Each worker records
// what it did in a History, timed on one clock that every process on the
// machine shares. Checkers then read the history and the account's log:
//
//   - CheckOverlap: no two workers believed they held the lock at once;
//   - CheckLostUpdates: no accepted write was based on a stale read;
//   - CheckStaleWrites: the account accepted no write whose fence was below
//     one it had already seen;
//   - CheckLostLatency: every Lost() fired no later than the next holder's
//     acquire.
//
// The scenarios (in the tests) put faults in the way — a Redis killed,
// paused or cut off, a holder process stopped past its lease, a failover,
// a moved slot, a node's clock running fast — each with the outcome the
// documentation promises written down before it runs, and the suite prints
// one table of what it measured.
package safety
