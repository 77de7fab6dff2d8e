package rpccases

import (
	"testing"
)

// Case is one scenario, run on one store.
type Case struct {
	Name string
	// Needs says what the store must be able to do (nil: anything).
	Needs func(Backend) bool
	Run   func(t *testing.T, a Adapter, be Backend)
}

// Run runs every case against a on every store.
func Run(t *testing.T, a Adapter) {
	for _, st := range Stores {
		t.Run(st.Name, func(t *testing.T) {
			for _, c := range Cases {
				t.Run(c.Name, func(t *testing.T) {
					be := st.Open(t)
					if c.Needs != nil && !c.Needs(be) {
						t.Skipf("the %s store cannot play this case", st.Name)
					}
					c.Run(t, a, be)
				})
			}
		})
	}
}
