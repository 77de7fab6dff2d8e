package redisstore_test

import (
	"testing"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/redistest"
	"github.com/reqlock/reqlock/internal/retrycases"
	"github.com/reqlock/reqlock/redisstore"
)

// The retry policy is the schedule on Redis too, whose wake-ups come
// through pub/sub: Limit gives up after its count of waits, a constant
// policy's attempts come as far apart as it says, and waiters that poll
// eagerly keep their places in line (package retrycases).
func TestRetryPolicyIsTheSchedule(t *testing.T) {
	redisStore := func(t *testing.T) store.Store { return redisstore.New(redistest.Start(t).Client(t)) }
	retrycases.Run(t, redisStore)
	retrycases.RunLine(t, redisStore)
}
