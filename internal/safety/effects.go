package safety

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core"
)

// Effects is what PausedAfterEffect measured over its runs: in how many a
// second effect was committed (the duplicate ran, and the paused holder's
// effect had landed too), and in how many the duplicate was refused
// (core.ErrInDoubt) or replayed the holder's record.
type Effects struct {
	Runs     int
	Second   int // runs with two effects committed
	Refused  int // the duplicate got ErrInDoubt
	Replayed int // the duplicate got the record
	Errors   []string
}

func (e Effects) String() string {
	return fmt.Sprintf("%d/%d 2nd (%d refused, %d replayed)", e.Second, e.Runs, e.Refused, e.Replayed)
}

// Effect makes a run's effect for key, within the run's context (the
// store's transaction is on it under pgstore.WithTx), and Count says how
// many effects of key were committed.
type Effect struct {
	Make  func(ctx context.Context, key string) error
	Count func(ctx context.Context, key string) (int, error)
}

// PausedAfterEffect runs, n times at once on keys of its own, a Once by
// holder whose function makes its effect and then pauses for three
// leases before it returns (a GC pause or a stopped VM between the effect
// and the record: holder has no watchdog, which is paused with it), while
// a duplicate runs the same Once by dup (another instance, waiting for the
// key). It counts the runs in which a second effect was committed.
func PausedAfterEffect(holder, dup *core.Locker, lease time.Duration, n int, eff Effect) Effects {
	res := Effects{Runs: n}
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		res.Errors = append(res.Errors, err.Error())
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for i := range n {
		key := fmt.Sprintf("effects:%d:%d", time.Now().UnixNano(), i)
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			made := make(chan struct{})
			var first sync.WaitGroup
			var ferr error
			first.Go(func() {
				_, ferr = holder.Once(ctx, key, time.Hour, func(ctx context.Context) ([]byte, error) {
					err := eff.Make(ctx, key)
					if err != nil {
						// The lease ran out before the effect was made
						// (a loaded machine): the run proves nothing.
						fail(fmt.Errorf("%s: the holder's effect: %w", key, err))
					}
					close(made)
					if err != nil {
						return nil, err
					}
					time.Sleep(3 * lease)
					return []byte("done"), nil
				})
			})
			held := make(chan struct{})
			go func() { first.Wait(); close(held) }()
			select {
			case <-made:
			case <-held: // Once returned before fn made the effect
				fail(fmt.Errorf("%s: the holder did not run: %v", key, ferr))
				return
			}
			out, err := dup.Once(ctx, key, time.Hour, func(ctx context.Context) ([]byte, error) {
				return []byte("done"), eff.Make(ctx, key)
			})
			first.Wait()
			c, cerr := eff.Count(ctx, key)
			mu.Lock()
			defer mu.Unlock()
			if ferr != nil && !errors.Is(ferr, core.ErrLockLost) {
				res.Errors = append(res.Errors, key+": the paused holder: "+ferr.Error())
			}
			switch {
			case cerr != nil:
				res.Errors = append(res.Errors, cerr.Error())
			case errors.Is(err, core.ErrInDoubt):
				res.Refused++
			case err != nil:
				res.Errors = append(res.Errors, key+": the duplicate: "+err.Error())
			case out.Replayed:
				res.Replayed++
			}
			if c > 1 {
				res.Second++
			}
		})
	}
	wg.Wait()
	return res
}

// MemoryEffects is an Effect kept in this process's memory: an effect
// outside the lock store, as a payment API's is.
func MemoryEffects() Effect {
	var mu sync.Mutex
	made := map[string]int{}
	return Effect{
		Make: func(_ context.Context, key string) error {
			mu.Lock()
			made[key]++
			mu.Unlock()
			return nil
		},
		Count: func(_ context.Context, key string) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return made[key], nil
		},
	}
}

// EffectsTable renders rows of effects, one per store (the store, then
// the RunAgain, RefuseInDoubt and WithTx columns, "—" where a store has no
// such setup), as a Markdown table.
func EffectsTable(rows [][4]string) string {
	var b strings.Builder
	b.WriteString("| holder paused past its lease after its effect: second effects committed | RunAgain (default) | RefuseInDoubt | WithTx |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r[0], r[1], r[2], r[3])
	}
	return b.String()
}
