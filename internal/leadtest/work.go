package leadtest

import (
	"context"
	"time"

	"github.com/reqlock/reqlock/core"
)

// actEvery is how often a leader acts, and workTime how long each act's
// work takes between its check and its write: a process stopped in that
// window writes late, under a term that may be over.
const (
	actEvery = 10 * time.Millisecond
	workTime = 3 * time.Millisecond
)

// Work is the fn a leader runs under Lead: until its context is over it
// acts, each time checking the context first and then writing its term to
// w. Each step goes to emit.
func Work(who string, w Writer, emit func(Event)) func(context.Context) error {
	return func(ctx context.Context) error {
		lk, _ := core.FromContext(ctx)
		term := lk.Fence()
		emit(Event{T: now(), Who: who, Kind: Begin, Term: term})
		tick := time.NewTicker(actEvery)
		defer tick.Stop()
		for {
			// The time is read before the check: an act is stamped no later
			// than the moment its context was seen live.
			now := now()
			if ctx.Err() != nil {
				emit(Event{T: now, Who: who, Kind: End, Term: term})
				return ctx.Err()
			}
			emit(Event{T: now, Who: who, Kind: Act, Term: term})
			time.Sleep(workTime)
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_ = w.Write(wctx, who, term) // a refusal is the register's to record
			cancel()
			select {
			case <-tick.C:
			case <-ctx.Done():
			}
		}
	}
}
