// Package httpload drives reqlock's HTTP middlewares with hostile input and bounded load over loopback, and
// checks what comes back: every response has one of the documented shapes,
// no two handler runs for one key overlap, the lock store holds only hashed
// keys that expire, and goroutines and heap return to where they were.
//
// The servers are the frameworks of package
// github.com/reqlock/reqlock/internal/httpcases/frameworks, the ones the
// end-to-end cases run on. The safety suite (package safety) builds its
// HTTP scenarios from it.
package httpload
