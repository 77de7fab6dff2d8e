package redlock_test

import (
	"testing"

	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/internal/redisharness"
)

// The contract on five masters, less what Redlock does not promise (the
// harness waives it, with the reasons).
func TestConformance(t *testing.T) { storetest.Run(t, redisharness.Redlock(t)) }
