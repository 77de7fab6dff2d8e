package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/reqlock/reqlock/core/store"
)

// ErrInDoubt is returned by Once (with RefuseInDoubt) when an earlier run of
// the key lost its lock without a record: it crashed, paused past its
// lease, or the store lost the lock, and whether its effect landed is
// unknown. The key answers so until the record's retention ends or an
// operator clears it (Locker.ForgetRun).
var ErrInDoubt = errors.New("reqlock: an earlier run of the key lost its lock without a record: its outcome is unknown")

// ErrNoRunMarks is returned by Once with RefuseInDoubt when the store cannot
// tell a run in doubt (it does not implement store.RunMarker).
var ErrNoRunMarks = errors.New("reqlock: the store cannot tell a run in doubt (it does not implement store.RunMarker)")

// DoubtPolicy is what Once does when the run before it lost its lock
// without a record, so that its outcome is unknown (see ErrInDoubt).
type DoubtPolicy int

const (
	// RunAgain runs fn again, and says so (Outcome.InDoubt, and a warning
	// in the log): at least once, never silently twice. The default.
	RunAgain DoubtPolicy = iota
	// RefuseInDoubt runs nothing and returns ErrInDoubt, to every caller,
	// until the record's retention ends or an operator clears the key
	// (Locker.ForgetRun): at most once.
	RefuseInDoubt
)

// WithDoubtPolicy sets what Once does after a run in doubt (default
// RunAgain).
func WithDoubtPolicy(p DoubtPolicy) Option {
	if p != RunAgain && p != RefuseInDoubt {
		panic(fmt.Sprintf("reqlock: WithDoubtPolicy: unknown policy %d", p))
	}
	return func(l *Locker) { l.doubt = p }
}

// ForgetRun clears the mark of key's last run, whoever holds the key: an
// operator's word that a run in doubt was settled by hand, so that Once
// runs (or replays) for key again. A no-op for a key without a mark;
// ErrNoRunMarks when the store keeps none.
func (l *Locker) ForgetRun(ctx context.Context, key string) error {
	m, ok := l.store.(store.RunMarker)
	if !ok {
		return ErrNoRunMarks
	}
	skey, err := storeKey(l.prefix, key)
	if err != nil {
		return err
	}
	if err := m.ForgetRun(ctx, skey); err != nil {
		return unavailable("forget run", ctxErr(ctx), err)
	}
	return nil
}

// joinErrors is errors.Join on one line: each error's message, "; "
// between them, so that a log line or a problem body stays one line. nil
// errors are left out; errors.Is and errors.As see every one.
func joinErrors(errs ...error) error {
	var kept []error
	for _, err := range errs {
		if err != nil {
			kept = append(kept, err)
		}
	}
	switch len(kept) {
	case 0:
		return nil
	case 1:
		return kept[0]
	}
	return joinedError(kept)
}

type joinedError []error

func (e joinedError) Error() string {
	b := []byte(e[0].Error())
	for _, err := range e[1:] {
		b = append(b, "; "...)
		b = append(b, err.Error()...)
	}
	return string(b)
}

func (e joinedError) Unwrap() []error { return e }
