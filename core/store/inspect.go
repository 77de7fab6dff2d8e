package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Holding is what the store says about a key at one moment. By the time it
// is read the holder may have released, renewed or lost the lock: it is for
// operators and dashboards, never for deciding whether to go ahead.
type Holding struct {
	// Held is true while someone holds the lock, or while a release has
	// handed it to the next waiter in line (HandedOff).
	Held bool
	// HandedOff is true while the lock is held under the name of a waiter in
	// line: a release handed it over, for at most HandOffTimeout if that
	// waiter does not take it. On redisstore.Store a waiter holds the lock under
	// its name, whether it was handed the lock or found it free, until it
	// releases. Holder is that waiter's Locker's label.
	HandedOff bool
	// Expired is true while Held is but the holder's lease has run out and
	// the store still keeps the key from others: on pgstore, until a
	// transaction the holder guarded (pgstore.Guard) ends. Lease is 0;
	// every caller is told the key is taken.
	Expired bool
	// Lease is the holder's remaining lease; 0 when free (and when a lock
	// was set by hand without an expiry). The holder's
	// watchdog renews it, so it says how long a holder that died would still
	// block the key, not when the work ends.
	Lease time.Duration
	// Fence is the last fence handed out for the key: the holder's, when
	// held. redisstore.Store keeps it after the release (as long as the fence
	// counter lives); memorystore.Store only while the key is held; 0 when the
	// store has none. redlock.Store gives the greatest any node handed out,
	// which is above the holder's when a later attempt took a minority of
	// the nodes (and gave them back).
	Fence uint64
	// Waiting is how many waiters stand in the key's line across instances,
	// in a store that keeps one (see Waker); 0 otherwise. Inside one
	// Locker only the first waiter of a key stands in the store's line, the
	// others queue behind it in process, so this counts instances waiting
	// rather than requests.
	Waiting int
	// Holder is the holder's label (WithHolder); "" when it set none.
	Holder string
	// StoreKey is the key the store uses: the prefix and the hashed key.
	StoreKey string
}

// holdingJSON is the JSON form of a Holding, the one `reqlock inspect
// -json` prints: snake_case names, the lease in whole milliseconds.
type holdingJSON struct {
	Held      bool   `json:"held"`
	HandedOff bool   `json:"handed_off"`
	Expired   bool   `json:"expired"`
	Holder    string `json:"holder"`
	LeaseMs   int64  `json:"lease_ms"`
	Fence     uint64 `json:"fence"`
	Waiting   int    `json:"waiting"`
	StoreKey  string `json:"store_key"`
}

// MarshalJSON writes h as `reqlock inspect -json` prints it:
//
//	{"held":true,"handed_off":false,"expired":false,"holder":"pod-a","lease_ms":9000,"fence":7,"waiting":2,"store_key":"reqlock:{…}"}
//
// every field always present, the lease in whole milliseconds (rounded
// down), so that an operator's endpoint and the command read alike.
func (h Holding) MarshalJSON() ([]byte, error) {
	return json.Marshal(holdingJSON{
		Held: h.Held, HandedOff: h.HandedOff, Expired: h.Expired, Holder: h.Holder, LeaseMs: h.Lease.Milliseconds(),
		Fence: h.Fence, Waiting: h.Waiting, StoreKey: h.StoreKey,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (h *Holding) UnmarshalJSON(b []byte) error {
	var j holdingJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*h = Holding{
		Held: j.Held, HandedOff: j.HandedOff, Expired: j.Expired, Holder: j.Holder, Lease: time.Duration(j.LeaseMs) * time.Millisecond,
		Fence: j.Fence, Waiting: j.Waiting, StoreKey: j.StoreKey,
	}
	return nil
}

// Inspector is implemented by stores that can say who holds a key without
// changing anything: no lease, fence or line is touched. redisstore.Store,
// redlock.Store and memorystore.Store implement it.
type Inspector interface {
	// Inspect reads what the store holds for key, the namespaced key a
	// Locker builds (Lease.Key); StoreKey is left for the Locker to fill.
	// Holder is the part of the lock's value after its first '.' (see
	// WithHolder); the token before it never leaves the store's answer.
	Inspect(ctx context.Context, key string) (Holding, error)
}

// HolderSep joins a token and the Locker's holder label in the value a
// store keeps for a lock. Tokens are base64url, which has no '.', so the
// first '.' of a value is where the label starts.
const HolderSep = "."

// HolderOf is the holder label in a lock's stored value, "" when it has
// none; the token before it is the holder's secret and stays out of any
// answer.
func HolderOf(value string) string {
	_, label, _ := strings.Cut(value, HolderSep)
	return label
}
