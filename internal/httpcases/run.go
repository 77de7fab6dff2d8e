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

// Run runs every case for fw against every store, in parallel.
func Run(t *testing.T, fw Framework) {
	for _, st := range Stores {
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
