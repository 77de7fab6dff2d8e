package pgstore_test

import (
	"testing"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/retrycases"
)

// The retry policy is the schedule on PostgreSQL too, whose releases wake
// waiters through LISTEN: Limit gives up after its count of waits, and a
// constant policy's attempts come as far apart as it says, and eager
// waiters keep their places in line.
func TestRetryPolicyIsTheSchedule(t *testing.T) {
	open := func(t *testing.T) store.Store {
		s, _ := open(t)
		return s
	}
	retrycases.Run(t, open)
	retrycases.RunLine(t, open)
}
