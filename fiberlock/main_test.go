package fiberlock_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/reqlock/reqlock/internal/httpcases"
)

// fasthttp keeps the Date header up to date in a goroutine of its own, once
// per process, from the first server on.
func TestMain(m *testing.M) {
	httpcases.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"))
}
