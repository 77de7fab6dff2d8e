// Package backoff holds the retry policies a [github.com/reqlock/reqlock/core.Locker]
// uses while it waits for a lock.
//
// A [Policy] is a recipe, not a state: it hands out a fresh
// [github.com/cenkalti/backoff/v4.BackOff] for every Obtain, so one Policy can be
// shared by any number of goroutines without them stepping on each other's
// intervals. Every policy except [None] is randomized, so that many waiters that
// lost the same race do not all come back at the same instant.
//
// A policy given to core.WithRetry is the schedule of Obtain on every store:
// on a store that wakes waiters at a release, a wake-up ends a wait sooner,
// never later, and [Limit] gives up after its count of waits all the same.
package backoff
