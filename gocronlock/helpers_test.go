package gocronlock_test

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/reqlock/reqlock/core"
)

// quiet drops the Lockers' log lines: the tests stop leaders on purpose.
var quiet = core.WithLogger(slog.New(slog.DiscardHandler))

// run is one run of the job: by which instance, when.
type run struct {
	who string
	at  time.Time
}

// runs records the job's runs across instances.
type runs struct {
	mu  sync.Mutex
	all []run
}

func (r *runs) job(who string) func() {
	return func() {
		r.mu.Lock()
		r.all = append(r.all, run{who: who, at: time.Now()})
		r.mu.Unlock()
	}
}

// since returns the runs at or after t.
func (r *runs) since(t time.Time) []run {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []run
	for _, x := range r.all {
		if !x.at.Before(t) {
			out = append(out, x)
		}
	}
	return out
}

// scheduler starts a gocron scheduler with opts and one job every
// interval that records its runs as who; it is shut down when the test
// ends.
func scheduler(t *testing.T, r *runs, who string, interval time.Duration, opts ...gocron.SchedulerOption) gocron.Scheduler {
	t.Helper()
	s, err := gocron.NewScheduler(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewJob(gocron.DurationJob(interval), gocron.NewTask(r.job(who)), gocron.WithName("report")); err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { _ = s.Shutdown() })
	return s
}
