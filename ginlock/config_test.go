package ginlock

import (
	"testing"

	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

func TestNewPanicNamesTheField(t *testing.T) {
	httpcases.CheckConfigPanics(t, "ginlock.New: ", func(c httplock.Config) { New(c) })
}
