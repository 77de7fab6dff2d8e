package echolock

import (
	"testing"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

func TestWithConfigPanicNamesTheField(t *testing.T) {
	httpcases.CheckConfigPanics(t, "echolock.WithConfig: ", func(c httplock.Config) { WithConfig(Config{Lock: c}) })
}
