package httplock

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// burstQuiet is how long a burstLog stays quiet after a warning.
const burstQuiet = 10 * time.Second

// burstLog logs the first of a burst of identical messages and counts the
// rest: a store outage under load would otherwise log once per request.
type burstLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func (b *burstLog) warn(lg *slog.Logger, msg string, err error) {
	b.log(lg, slog.LevelWarn, msg, err)
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
