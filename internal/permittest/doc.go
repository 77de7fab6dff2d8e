// Package permittest proves a store's permits (core.Semaphore) under
// faults: instances each take one of N permits of one key, write to a
// fenced register at the start and at the end of every hold, and give the
// permit back, while a holder is killed, stopped, slowed down or the store
// restarted. The checks say, from the history of every instance, how many
// holders trusted their permits at once (never more than N, where the
// documentation promises it), and whether the register took a stale write.
//
// A holder trusts its permit from the moment its acquire returns until the
// first of: it invokes Release, its Lock's Lost() fires, or its validity
// by its own clock runs out (store.Validity of the lease, counted from the
// moment it asked). The instances run without the watchdog, so that this
// validity is the Lock's own and can be known from outside it.
//
// The register is the fenced resource for N permits (see Register): it
// remembers the N highest fences it has accepted, and refuses a write
// whose fence is below the lowest of them once it has N.
//
// An instance is either a Locker in this process (StartLocal), whose
// store may be reached through a fault proxy, or this test binary run
// again as a child process (Spawn, Child) that is sent SIGSTOP or SIGKILL.
// Every instance writes the same events, timed on CLOCK_MONOTONIC, which
// every process on the machine shares, so that the parent can lay them on
// one time line.
package permittest
