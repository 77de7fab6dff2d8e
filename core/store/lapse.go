package store

import "context"

// LapseNotice is how a store in the holder's own process tells a holder
// whose lease ran out that another caller took the key, or that the store
// dropped it: the store fires it before that caller gets the lock, so Lost
// comes first, however late the holder's own timer runs. The Locker hands
// one to every acquire in its context (LapseNoticeFrom) unless the store
// says it never tells (LapseTeller).
type LapseNotice interface {
	// Lapse marks the holder lost. The store calls it under its own mutex,
	// before any other caller can be granted the key; it only marks, and
	// touches no store. The func it returns, when not nil, finishes the
	// loss (the watchdog, telemetry, the log): the store calls it once it
	// has let go of its mutex, and before it answers.
	Lapse() (finish func())
}

// LapseTeller is implemented by stores that say whether they tell lapses.
// A store that does not implement it is taken to tell them (it may wrap
// one that does, passing the context on); a network store, whose holders
// learn of a lost lease from their own clock, returns false so that its
// acquires carry no notice.
type LapseTeller interface {
	TellsLapses() bool
}

type lapseKey struct{}

// WithLapseNotice returns ctx carrying n for the store's grant.
func WithLapseNotice(ctx context.Context, n LapseNotice) context.Context {
	return context.WithValue(ctx, lapseKey{}, n)
}

// LapseNoticeFrom is the notice an acquire's context carries, or nil.
func LapseNoticeFrom(ctx context.Context) LapseNotice {
	n, _ := ctx.Value(lapseKey{}).(LapseNotice)
	return n
}

// Kinder is implemented by stores that name their kind ("redis",
// "redis_cluster", "memory", "postgres", …), the reqlock.store attribute of
// their telemetry. A store without it is "other".
type Kinder interface {
	Kind() string
}
