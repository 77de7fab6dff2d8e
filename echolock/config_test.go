package echolock

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// Config copies httplock.Config's fields by hand, so that literals such as
// echolock.Config{Locker: l} keep compiling: this fails when the engine
// gains a field Config lacks, or engineConfig does not carry one over.
func TestConfigMirrorsEngine(t *testing.T) {
	httpcases.CheckConfigMirror(t, Config.engineConfig, map[string]string{
		"Key":          "an echolock.KeyFunc, read by the middleware, not the engine",
		"Respond":      "ErrorHandler, in Echo's style, answers a rejection",
		"Skipper":      "Echo's convention, the middleware's own",
		"BeforeFunc":   "Echo's convention, the middleware's own",
		"ErrorHandler": "Echo's convention: turns a rejection into the error returned",
	})
}

func TestNewPanicNamesTheField(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	httpcases.CheckConfigPanics(t, func(c Config) { WithConfig(c) }, map[string]Config{
		"echolock.WithConfig: httplock: Config.MaxWait is negative (-1s)":              {Locker: l, Key: FromHeader("X-Key"), MaxWait: -time.Second},
		"echolock.WithConfig: httplock: Config.StoreTimeout is negative (-1ms)":        {Locker: l, Key: FromHeader("X-Key"), StoreTimeout: -time.Millisecond},
		"echolock.WithConfig: httplock: Config.Locker is nil":                          {Key: FromHeader("X-Key")},
		"echolock.WithConfig: Config.Key is nil: " + httplock.ErrInvalidConfig.Error(): {Locker: l},
	})
}
