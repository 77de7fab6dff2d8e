package httpcases

import (
	"errors"
	"testing"

	"github.com/reqlock/reqlock/httplock"
)

// CheckConfigPanics builds each config in cases with construct (an
// adapter's constructor) and fails t unless it panics with an error whose
// text is the case's key, naming the field, and that errors.Is
// httplock.ErrInvalidConfig.
func CheckConfigPanics[C any](t *testing.T, construct func(C), cases map[string]C) {
	t.Helper()
	for want, cfg := range cases {
		func() {
			defer func() {
				err, _ := recover().(error)
				if err == nil || err.Error() != want || !errors.Is(err, httplock.ErrInvalidConfig) {
					t.Errorf("recovered %v, want %q wrapping ErrInvalidConfig", err, want)
				}
			}()
			construct(cfg)
		}()
	}
}
