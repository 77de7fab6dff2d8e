package ginlock

import (
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
	"github.com/reqlock/reqlock/memorystore"
)

// Config copies httplock.Config's fields by hand, so that literals such as
// ginlock.Config{Locker: l} keep compiling: this fails when the engine
// gains a field Config lacks, or engineConfig does not carry one over.
func TestConfigMirrorsEngine(t *testing.T) {
	httpcases.CheckConfigMirror(t, Config.engineConfig, map[string]string{
		"Key":     "a ginlock.KeyFunc, read by the middleware, not the engine",
		"Respond": "takes the *gin.Context; the middleware calls it",
	})
}

func TestNewPanicNamesTheField(t *testing.T) {
	l := core.NewLocker(memorystore.New())
	httpcases.CheckConfigPanics(t, func(c Config) { New(c) }, map[string]Config{
		"ginlock.New: httplock: Config.MaxWait is negative (-1s)":              {Locker: l, Key: FromHeader("X-Key"), MaxWait: -time.Second},
		"ginlock.New: httplock: Config.StoreTimeout is negative (-1ms)":        {Locker: l, Key: FromHeader("X-Key"), StoreTimeout: -time.Millisecond},
		"ginlock.New: httplock: Config.Locker is nil":                          {Key: FromHeader("X-Key")},
		"ginlock.New: Config.Key is nil: " + httplock.ErrInvalidConfig.Error(): {Locker: l},
	})
}
