package httplock_test

import (
	"errors"
	"testing"

	"github.com/reqlock/reqlock/httplock"
)

// A nil *Rejection that reached an error (an adapter's "no rejection"
// passed on as an error) matches nothing, rather than panicking.
func TestNilRejectionMatchesNothing(t *testing.T) {
	var rej *httplock.Rejection
	var err error = rej
	if errors.Is(err, httplock.ErrLocked) {
		t.Fatal("a nil rejection matched ErrLocked")
	}
}
