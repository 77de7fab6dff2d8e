package echo5lock

import (
	"errors"
	"testing"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

func TestConfigErrorNamesTheField(t *testing.T) {
	for msg, lock := range httpcases.BadConfigs() {
		_, err := Config{Lock: lock}.ToMiddleware()
		if want := "echo5lock: " + msg; err == nil || err.Error() != want || !errors.Is(err, httplock.ErrInvalidConfig) {
			t.Errorf("ToMiddleware: %v, want %q", err, want)
		}
	}
	httpcases.CheckConfigPanics(t, "echo5lock: ", func(c httplock.Config) { New(c) })
}
