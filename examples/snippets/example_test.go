package snippets_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/snippets"
	"github.com/reqlock/reqlock/memorystore"
)

// The README's net/http routes on the memory store: a payment retried with
// the same Idempotency-Key gets the first answer, replayed.
func ExampleNetHTTP() {
	srv := httptest.NewServer(snippets.NetHTTP(core.NewLocker(memorystore.New())))
	defer srv.Close()
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/payments", nil)
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Idempotency-Key", "pay-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, "replayed:", resp.Header.Get("Idempotent-Replayed") == "true")
	}
	http.DefaultClient.CloseIdleConnections()
	// Output:
	// 201 replayed: false
	// 201 replayed: true
}
