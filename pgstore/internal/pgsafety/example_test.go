package pgsafety_test

import (
	"fmt"

	"github.com/reqlock/reqlock/internal/safety"
	"github.com/reqlock/reqlock/pgstore/internal/pgsafety"
)

// A holder that paused past its lease wrote after its successor: the
// ledger, read as the account's log, shows one stale write.
func ExampleAccesses() {
	ledger := []pgsafety.Write{
		{Version: 1, Worker: "a", Fence: 10, Base: 0, Value: 1},
		{Version: 2, Worker: "b", Fence: 12, Base: 1, Value: 2},
		{Version: 3, Worker: "a", Fence: 10, Base: 2, Value: 3},
	}
	fmt.Println(len(safety.CheckStaleWrites(pgsafety.Accesses(ledger))))
	// Output: 1
}
