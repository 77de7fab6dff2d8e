package echo5lock

import (
	"errors"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// Config embeds httplock.Config, so it cannot lack one of its fields; this
// fails if the embedding goes, or a field of its own starts to hide one of
// the engine's that it should not.
func TestConfigMirrorsEngine(t *testing.T) {
	httpcases.CheckConfigMirror(t, func(c Config) httplock.Config { return c.Config }, map[string]string{
		"Key":          "an echo5lock.KeyFunc; the embedded Config.Key must stay nil",
		"Respond":      "ErrorHandler answers a rejection; the embedded Config.Respond must stay nil",
		"Skipper":      "Echo's convention, the middleware's own",
		"BeforeFunc":   "Echo's convention, the middleware's own",
		"ErrorHandler": "Echo's convention: turns a rejection into the error returned",
	})
}

func TestConfigErrorNamesTheField(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	key := FromHeader("X-Key")
	for want, cfg := range map[string]Config{
		"echo5lock: httplock: Config.MaxWait is negative (-1s)":              {Key: key, Config: httplock.Config{Locker: l, MaxWait: -time.Second}},
		"echo5lock: httplock: Config.RetryAfter is negative (-1ms)":          {Key: key, Config: httplock.Config{Locker: l, RetryAfter: -time.Millisecond}},
		"echo5lock: httplock: Config.Locker is nil":                          {Key: key},
		"echo5lock: Config.Key is nil: " + httplock.ErrInvalidConfig.Error(): {Config: httplock.Config{Locker: l}},
	} {
		_, err := cfg.ToMiddleware()
		if err == nil || err.Error() != want || !errors.Is(err, httplock.ErrInvalidConfig) {
			t.Errorf("ToMiddleware: %v, want %q", err, want)
		}
		httpcases.CheckConfigPanics(t, func(c Config) { WithConfig(c) }, map[string]Config{want: cfg})
	}
}
