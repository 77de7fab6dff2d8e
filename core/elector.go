package core

import (
	"context"
	"errors"
	"sync"
	"time"
)

var (
	// ErrNotLeader is what Elector.IsLeader returns while this process does
	// not lead.
	ErrNotLeader = errors.New("reqlock: not the leader")

	// ErrElectorRunning is returned by Elector.Run while another Run of the
	// same Elector is under way.
	ErrElectorRunning = errors.New("reqlock: Elector.Run already running")
)

// Elector answers "does this process lead key now?" for code that checks
// before each piece of work rather than running inside Lead: a scheduler
// that asks before each run (a *Elector is a gocron v2 Elector as it
// stands), a consumer that pauses while another instance leads.
//
// Run campaigns in the background; IsLeader, Term and Leader may be called
// from any goroutine at any time.
type Elector struct {
	l   *Locker
	key string

	mu      sync.Mutex
	term    *Lock           // the lock of the current term; nil between terms
	termCtx context.Context // the term's context (Lead's fn's); nil between terms
	running bool
}

// Elector returns an Elector for key on l. Nothing happens until Run.
func (l *Locker) Elector(key string) *Elector {
	return &Elector{l: l, key: key}
}

// Run campaigns for the Elector's key until ctx ends, and campaigns again
// after every lost term; when ctx ends it resigns and returns ctx.Err().
// It returns at once with ErrEmptyKey for an empty key, and with
// ErrElectorRunning while another Run of e is under way.
func (e *Elector) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.running {
		e.mu.Unlock()
		return ErrElectorRunning
	}
	e.running = true
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.running = false
		e.mu.Unlock()
	}()
	return e.l.Lead(ctx, e.key, func(ctx context.Context) error {
		lk, _ := FromContext(ctx)
		e.setTerm(lk, ctx)
		defer e.setTerm(nil, nil)
		<-ctx.Done()
		return ctx.Err()
	})
}

func (e *Elector) setTerm(lk *Lock, ctx context.Context) {
	e.mu.Lock()
	e.term, e.termCtx = lk, ctx
	e.mu.Unlock()
}

// current is the lock of the term under way, if the term's context is
// still live: its Err says the term is over as soon as Run's context ended
// (before Run's goroutine has woken to resign), the lock was lost, or the
// lease ran out by the local monotonic clock (before the watchdog has said
// so).
func (e *Elector) current() *Lock {
	e.mu.Lock()
	lk, ctx := e.term, e.termCtx
	e.mu.Unlock()
	if lk == nil || ctx.Err() != nil || !lk.valid(time.Now()) {
		return nil
	}
	return lk
}

// IsLeader returns nil while this process leads, and ErrNotLeader
// otherwise. It asks no store: it checks the term's lease against the
// local monotonic clock, so a leader that was stopped past its lease never
// answers nil, even at its first call after it resumes. ctx is not used;
// it is there so that an Elector is a gocron v2 Elector.
func (e *Elector) IsLeader(ctx context.Context) error {
	if e.current() == nil {
		return ErrNotLeader
	}
	return nil
}

// Term is the current term, the fence of the lock this process leads
// with; 0 when it does not lead. Pass it with every write the leader
// makes, to a resource that refuses terms below the highest it has seen.
func (e *Elector) Term() uint64 {
	if lk := e.current(); lk != nil {
		return lk.Fence()
	}
	return 0
}

// Leader asks the store who leads: Holding.Holder is the leader's label
// (WithHolder on its Locker), Holding.Fence its term, Holding.Held false
// when nobody leads. It is Locker.Inspect of the Elector's key, with its
// errors.
func (e *Elector) Leader(ctx context.Context) (Holding, error) {
	return e.l.Inspect(ctx, e.key)
}
