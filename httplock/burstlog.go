package httplock

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// The attribute names of the middleware's log lines, stable for log
// queries: the scope, what the engine did with the request (an Outcome
// constant) or, for a line about no one request's outcome, why it logs.
// Besides them: "error", and "suppressed_since_last" for a burst. No line
// carries a key.
const (
	logScope   = "reqlock.scope"
	logOutcome = "reqlock.outcome"
	logReason  = "reqlock.reason"

	reasonNoContextValue = "no_context_value"
	reasonReleaseFailed  = "release_failed"
)

// burstQuiet is how long a message stays quiet after it was logged.
const burstQuiet = 10 * time.Second

// bursts holds one burstLog per logger, message and topic, shared by every
// middleware of the process: one store outage that many routes see is one
// burst, not one per route (the topic is the Locker, so two stores that
// fail are two bursts), while a misconfigured route is logged apart from
// another one (the topic is the scope). Loggers, Lockers and routes are
// made at start-up, so this stays small.
var bursts sync.Map // burstKey → *burstLog

type burstKey struct {
	lg    *slog.Logger
	msg   string
	topic any
}

// logBurst logs msg on lg unless lg logged it about topic less than
// burstQuiet ago; the next line it logs counts the ones it left out.
func logBurst(lg *slog.Logger, level slog.Level, msg string, topic any, err error, args ...any) {
	k := burstKey{lg, msg, topic}
	b, ok := bursts.Load(k)
	if !ok {
		b, _ = bursts.LoadOrStore(k, new(burstLog))
	}
	b.(*burstLog).log(lg, level, msg, err, args...)
}

// burstLog logs the first of a burst of identical messages and counts the
// rest: a store outage under load would otherwise log once per request.
type burstLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func (b *burstLog) log(lg *slog.Logger, level slog.Level, msg string, err error, args ...any) {
	now := time.Now()
	b.mu.Lock()
	if !b.last.IsZero() && now.Sub(b.last) < burstQuiet {
		b.suppressed++
		b.mu.Unlock()
		return
	}
	n := b.suppressed
	b.last, b.suppressed = now, 0
	b.mu.Unlock()
	lg.Log(context.Background(), level, msg, append(args, "error", err, "suppressed_since_last", n)...)
}
