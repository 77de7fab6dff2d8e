package snippets

import (
	"slices"
	"sync"
)

// Shared is docs/semaphore.md's resource fenced for n permits: it
// remembers the n highest fences it accepted and, once it has n, refuses a
// write whose fence is below the lowest of them. It takes writes only from
// the n newest permits it has heard from, so a holder that paused past its
// lease is refused once n newer permits have written.
type Shared struct {
	n   int
	mu  sync.Mutex
	top []uint64 // the n highest fences accepted, ascending
	log []string
}

// NewShared returns a resource for n permits.
func NewShared(n int) *Shared { return &Shared{n: n} }

// Write records entry for the holder of fence.
func (r *Shared) Write(fence uint64, entry string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.top) == r.n && fence < r.top[0] {
		return ErrStaleFence
	}
	r.top = remember(r.top, r.n, fence)
	r.log = append(r.log, entry)
	return nil
}

// remember inserts fence into top, the n highest fences so far, ascending,
// and drops the lowest past n.
func remember(top []uint64, n int, fence uint64) []uint64 {
	i, found := slices.BinarySearch(top, fence)
	if found {
		return top
	}
	top = slices.Insert(top, i, fence)
	if len(top) > n {
		top = top[1:]
	}
	return top
}
