// Package burstlog logs the first of a burst of like lines at once and
// the rest as one line with their count: a store outage under load would
// otherwise log the same warning once per request, or per background
// retry, and bury everything else. The lock engine (core) and the HTTP
// engine (httplock) share it, so that a burst reads the same in both.
package burstlog

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// DefaultQuiet is how long a line stays quiet after it was logged, unless
// a Log says otherwise.
const DefaultQuiet = 10 * time.Second

// AttrSuppressed is the attribute every line carries: how many like lines
// were left out since the last one logged (0 on the first of a burst).
const AttrSuppressed = "suppressed_since_last"

// Log logs one line per burst of each message about each topic, per
// logger: the first at once, and, when more came while it stayed quiet,
// one more at the end of the quiet with their count and the attributes of
// the last of them. A burst that goes on is one line per quiet period. The
// zero Log is ready to use; it is safe for concurrent use.
type Log struct {
	// Quiet is how long a line stays quiet after it was logged; 0:
	// DefaultQuiet. Set it before the first line.
	Quiet time.Duration

	mu     sync.Mutex
	bursts map[key]*burst
}

type key struct {
	lg    *slog.Logger
	msg   string
	topic any
}

// burst is the state of one message about one topic on one logger.
type burst struct {
	logged     time.Time // when a line was last logged
	suppressed int       // left out since
	level      slog.Level
	args       []any       // the last one left out's
	flush      *time.Timer // logs the count at the end of the quiet; nil: nothing left out
}

// Log logs msg with args on lg at level, unless a line of msg about topic
// went to lg less than the quiet ago: then it is counted, for the line at
// the end of the quiet. topic is any comparable value (the Locker, the
// scope): two topics are two bursts.
func (b *Log) Log(lg *slog.Logger, level slog.Level, msg string, topic any, args ...any) {
	k := key{lg, msg, topic}
	now := time.Now()
	b.mu.Lock()
	if b.bursts == nil {
		b.bursts = make(map[key]*burst)
	}
	e := b.bursts[k]
	if e == nil {
		e = &burst{}
		b.bursts[k] = e
	}
	// A count still to come (its timer fires late) takes this one too.
	if e.flush != nil || !e.logged.IsZero() && now.Sub(e.logged) < b.quiet() {
		e.suppressed++
		e.level, e.args = level, args
		if e.flush == nil {
			e.flush = time.AfterFunc(max(e.logged.Add(b.quiet()).Sub(now), 0), func() { b.endQuiet(k) })
		}
		b.mu.Unlock()
		return
	}
	e.logged = now
	b.mu.Unlock()
	lg.Log(context.Background(), level, msg, append(args, AttrSuppressed, 0)...)
}

// endQuiet logs the count of the lines left out during the quiet of k,
// and starts a quiet anew.
func (b *Log) endQuiet(k key) {
	b.mu.Lock()
	e := b.bursts[k]
	n, level, args := e.suppressed, e.level, e.args
	e.suppressed, e.args, e.flush = 0, nil, nil
	e.logged = time.Now()
	b.mu.Unlock()
	k.lg.Log(context.Background(), level, k.msg, append(args, AttrSuppressed, n)...)
}

func (b *Log) quiet() time.Duration {
	if b.Quiet > 0 {
		return b.Quiet
	}
	return DefaultQuiet
}
