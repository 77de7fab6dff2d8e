package store_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/reqlock/reqlock/core/store"
)

// A Holding in JSON reads as `reqlock inspect -json` prints it: an
// operator's endpoint can return it as it is.
func ExampleHolding_MarshalJSON() {
	h := store.Holding{Held: true, Holder: "pod-a", Lease: 9*time.Second + 400*time.Microsecond, Fence: 7, Waiting: 2, StoreKey: "reqlock:{k}"}
	b, _ := json.Marshal(h)
	fmt.Println(string(b))
	// Output:
	// {"held":true,"handed_off":false,"expired":false,"holder":"pod-a","lease_ms":9000,"fence":7,"waiting":2,"store_key":"reqlock:{k}"}
}
