package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// A Holding read back from its JSON is the one written, to the
// millisecond, inside a struct of the caller's as well as alone.
func TestHoldingJSONRoundTrips(t *testing.T) {
	in := store.Holding{Held: true, HandedOff: true, Holder: "pod-b", Lease: 1234 * time.Millisecond, Fence: 1 << 60, Waiting: 3, StoreKey: "reqlock:{x}"}
	type page struct {
		Lock *store.Holding `json:"lock"`
	}
	b, err := json.Marshal(page{&in})
	if err != nil {
		t.Fatal(err)
	}
	var out page
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Lock == nil || *out.Lock != in {
		t.Fatalf("read back %+v from %s, want %+v", out.Lock, b, in)
	}
	// A free key has every field too: a reader need not guess defaults.
	b, _ = json.Marshal(store.Holding{StoreKey: "reqlock:{y}"})
	const free = `{"held":false,"handed_off":false,"expired":false,"holder":"","lease_ms":0,"fence":0,"waiting":0,"store_key":"reqlock:{y}"}`
	if string(b) != free {
		t.Fatalf("free key: %s, want %s", b, free)
	}
	if err := json.Unmarshal([]byte(`{"lease_ms":"soon"}`), new(store.Holding)); err == nil {
		t.Fatal("a lease_ms that is no number was read without an error")
	}
}
