package redistest

import (
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// AnsweredPolls tells, on a channel, when each acquire of a waiter in line
// got its answer; Hook is what the waiter's client adds.
type AnsweredPolls struct{ at chan time.Time }

// NewAnsweredPolls returns an empty AnsweredPolls.
func NewAnsweredPolls() *AnsweredPolls { return &AnsweredPolls{at: make(chan time.Time, 64)} }

// Hook reports each line acquire answered without error.
func (p *AnsweredPolls) Hook() CommandHook {
	return CommandHook{Answered: func(cmd redis.Cmder, err error) {
		if err == nil && IsLineAcquire(cmd) {
			select {
			case p.at <- time.Now():
			default:
			}
		}
	}}
}

// IsLineAcquire reports whether cmd is the Redis store's acquire for a
// waiter: its five keys are the lock, the fence counter, the cancel marker,
// the record and, last, the key's line (a release names the line second).
func IsLineAcquire(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 8 {
		return false
	}
	line, _ := args[7].(string)
	return strings.HasSuffix(line, ":q")
}

// Next waits for the next answered poll, up to d; false if none came.
func (p *AnsweredPolls) Next(d time.Duration) bool {
	select {
	case <-p.at:
		return true
	case <-time.After(d):
		return false
	}
}

// Drain forgets the polls answered so far.
func (p *AnsweredPolls) Drain() {
	for {
		select {
		case <-p.at:
		default:
			return
		}
	}
}
