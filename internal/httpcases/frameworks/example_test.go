package frameworks_test

import (
	"fmt"

	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
)

// The frameworks the end-to-end cases run on, for a store's own
// end-to-end test to range over.
func Example() {
	for _, fw := range frameworks.All {
		fmt.Println(fw.Name)
	}
	// Output:
	// net/http
	// chi
	// gin
	// echo
	// echo5
}
