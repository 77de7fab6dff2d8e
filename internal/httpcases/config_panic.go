package httpcases

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// BadConfigs are configs no middleware may accept, each under the message
// of the *httplock.ConfigError it is refused with.
func BadConfigs() map[string]httplock.Config {
	l := core.NewLocker(memorystore.New())
	key := httplock.FromHeader("X-Key")
	return map[string]httplock.Config{
		"httplock: Config.MaxWait is negative (-1s)":                                             {Locker: l, Key: key, MaxWait: -time.Second},
		"httplock: Config.StoreTimeout is negative (-1ms)":                                       {Locker: l, Key: key, StoreTimeout: -time.Millisecond},
		"httplock: Config.RetryAfter is negative (-1ms)":                                         {Locker: l, Key: key, RetryAfter: -time.Millisecond},
		"httplock: Config.Mode is unknown (Mode(5))":                                             {Locker: l, Key: key, Mode: 5},
		"httplock: Config.Locker is nil":                                                         {Key: key},
		"httplock: Config.Key is nil":                                                            {Locker: l},
		"httplock: Config.Limit is negative (-1)":                                                {Locker: l, Key: key, Limit: -1},
		"httplock: Config.Limit is 3 with Replay set: replay runs one request per key at a time": {Locker: l, Key: key, Limit: 3, Replay: &httplock.ReplayConfig{}},
		"httplock: Config.Limit is over 65536 (65537): reqlock: invalid semaphore limit":         {Locker: l, Key: key, Limit: 1<<16 + 1},
	}
}

// CheckConfigPanics builds each of BadConfigs with construct (an adapter's
// constructor) and fails t unless it panics with an error whose text is
// prefix and the ConfigError's message, naming the field, and that
// errors.Is httplock.ErrInvalidConfig.
func CheckConfigPanics(t *testing.T, prefix string, construct func(httplock.Config)) {
	t.Helper()
	for msg, cfg := range BadConfigs() {
		func() {
			defer func() {
				err, _ := recover().(error)
				if want := prefix + msg; err == nil || err.Error() != want || !errors.Is(err, httplock.ErrInvalidConfig) {
					t.Errorf("recovered %v, want %q wrapping ErrInvalidConfig", err, want)
				}
			}()
			construct(cfg)
		}()
	}
}
