package core_test

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// answeredPolls tells, on a channel, when each acquire of a waiter in line
// got its answer.
type answeredPolls struct{ at chan time.Time }

func newAnsweredPolls() *answeredPolls { return &answeredPolls{at: make(chan time.Time, 64)} }

func (p *answeredPolls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (p *answeredPolls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil && isLineAcquire(cmd) {
			select {
			case p.at <- time.Now():
			default:
			}
		}
		return err
	}
}
func (p *answeredPolls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// isLineAcquire reports whether cmd is acquire.lua for a waiter: its five
// keys are the lock, the fence counter, the cancel marker, the record and,
// last, the key's line (a release names the line second).
func isLineAcquire(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 8 {
		return false
	}
	line, _ := args[7].(string)
	return strings.HasSuffix(line, ":q")
}

// nextPoll waits for the next answered poll, up to d; false if none came.
func (p *answeredPolls) nextPoll(d time.Duration) bool {
	select {
	case <-p.at:
		return true
	case <-time.After(d):
		return false
	}
}

// drain forgets the polls answered so far.
func (p *answeredPolls) drain() {
	for {
		select {
		case <-p.at:
		default:
			return
		}
	}
}
