package etcdstore_test

import (
	"testing"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/retrycases"
)

// The retry policy is the schedule on etcd too, whose waiters are woken
// by a watch: Limit gives up after its count of waits, and a constant
// policy's attempts come as far apart as it says.
func TestRetryPolicyIsTheSchedule(t *testing.T) {
	open := func(t *testing.T) store.Store {
		s, _ := newStore(t)
		return s
	}
	retrycases.Run(t, open)
	retrycases.RunLine(t, open)
}
