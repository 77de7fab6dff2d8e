package doccheck_test

import (
	"fmt"

	"github.com/reqlock/reqlock/internal/doccheck"
)

func ExampleFind() {
	md := "Take the lock:\n\n```go\nlk, err := locker.Obtain(ctx, key)\n```\n"
	sources := map[string]string{
		"snippets/obtain.go": "package snippets\n\nfunc obtain() {\n\tlk, err := locker.Obtain(ctx, key)\n}\n",
	}
	for _, b := range doccheck.Blocks("README.md", []byte(md)) {
		file, ok := doccheck.Find(b, sources)
		fmt.Printf("%s:%d is in %s: %v\n", b.File, b.Line, file, ok)
	}
	// Output: README.md:3 is in snippets/obtain.go: true
}
