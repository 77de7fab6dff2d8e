package frameworks_test

import (
	"fmt"

	"github.com/reqlock/reqlock/internal/httpcases/frameworks"
)

// The four frameworks the end-to-end cases run on, for a store's own
// end-to-end test to range over.
func Example() {
	for _, fw := range frameworks.All {
		fmt.Println(fw.Name)
	}
	// Output:
	// net/http
	// gin
	// echo
	// echo5
}
