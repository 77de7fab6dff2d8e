package pgsafety

import "github.com/reqlock/reqlock/internal/safety"

// Write is one committed write of the account, as its ledger row says.
type Write struct {
	Version int64 // the order the account row took it in
	Worker  string
	Fence   uint64
	Base    int64 // the value the writer read
	Value   int64 // the value it wrote
}

// Accesses is the ledger as the account's log for internal/safety's
// checkers: every write accepted, in the order the account took them.
func Accesses(ledger []Write) []safety.Access {
	out := make([]safety.Access, len(ledger))
	for i, w := range ledger {
		out[i] = safety.Access{T: w.Version, Worker: w.Worker, Write: true, Fence: w.Fence,
			Base: w.Base, Value: w.Value, Accepted: true}
	}
	return out
}
