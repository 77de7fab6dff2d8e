// Package leadtest proves leadership (core.Locker.Lead) on a store: three
// instances lead one key in turn while the leader is killed or paused, and
// the checks say whether, at every moment, at most one of them acted as
// leader, whether terms only grew, how long each hand-over took, and
// whether a fenced resource took any write from a term that was over.
//
// An instance is either a Locker in this process whose link to the store
// can be stalled or cut (Gate), or this test binary run again as a child
// process (Spawn, Child) that is sent SIGSTOP or SIGKILL. Every instance
// writes the same events, timed on CLOCK_MONOTONIC, which every process on
// the machine shares, so that the parent can lay them on one time line.
package leadtest
