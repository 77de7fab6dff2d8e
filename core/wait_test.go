package core_test

import (
	"testing"

	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/memorystore"
)

// Locker.Obtain's doc: "when ctx ends before the store answered its first
// attempt (or had ended already), it is ErrUnavailable and the context's
// error, as for TryObtain: nothing says the key was taken." The memory
// store's subscription always listens, so Obtain joins the line with its
// first attempt (the Redis store's tests check it with its subscription
// listening).
func TestObtainCancelledBeforeAnyAnswerIsUnavailable(t *testing.T) {
	lockertest.ObtainCancelledBeforeAnyAnswer(t, memorystore.New(), false)
}
