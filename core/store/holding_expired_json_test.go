package store_test

import (
	"encoding/json"
	"testing"

	"github.com/reqlock/reqlock/core/store"
)

// A key whose holder's lease ran out while the store still keeps it from
// others (Expired) reads back as such from its JSON: an endpoint that
// returns a Holding must not show it as a live holder with no lease left.
func TestHoldingJSONKeepsExpired(t *testing.T) {
	in := store.Holding{Held: true, Expired: true, Holder: "pod-a", Fence: 9, StoreKey: "reqlock:{x}"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out store.Holding
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("read back %+v from %s, want %+v", out, b, in)
	}
}
