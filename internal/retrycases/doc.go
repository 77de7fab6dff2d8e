// Package retrycases checks, on a real store, that Obtain follows the
// Locker's retry policy (core.WithRetry) as its schedule: a policy that
// gives up does so after its count of waits, however long the holder's
// lease, and a constant policy's attempts come as far apart as it says,
// whether or not the store wakes waiters. Every store's tests run the same
// cases with Run; Recorder is the store wrapper that times the attempts.
package retrycases
