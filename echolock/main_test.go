package echolock_test

import (
	"testing"

	"github.com/reqlock/reqlock/internal/httpcases"
)

func TestMain(m *testing.M) { httpcases.VerifyTestMain(m) }
