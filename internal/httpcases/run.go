// Package httpcases is the one table of end-to-end cases that every reqlock
// HTTP adapter (net/http, Gin, Echo) must pass, over real HTTP on loopback,
// against every store in Stores.
package httpcases

import (
	"net/http"
	"testing"
)

// Case is one end-to-end behaviour.
type Case struct {
	Name string
	Run  func(e *Env)
}

// Run runs every case for fw against every store in Stores, in parallel.
func Run(t *testing.T, fw Framework) { RunOn(t, fw, Stores...) }

// RunOn runs every case for fw against each of stores, in parallel: a store
// defined outside this package (one in a module of its own) runs the same
// cases as those in Stores.
func RunOn(t *testing.T, fw Framework, stores ...Store) {
	for _, st := range stores {
		t.Run(st.Name, func(t *testing.T) {
			open := st.Open
			if st.Shared != nil {
				open = st.Shared(t)
			}
			for _, c := range Cases {
				t.Run(c.Name, func(t *testing.T) {
					t.Parallel()
					tr := &http.Transport{MaxIdleConnsPerHost: 64}
					t.Cleanup(tr.CloseIdleConnections)
					c.Run(&Env{T: t, FW: fw, Backend: open(t), client: &http.Client{Transport: tr}})
				})
			}
		})
	}
}
