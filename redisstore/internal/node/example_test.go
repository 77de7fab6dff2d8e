package node_test

import (
	"fmt"

	"github.com/reqlock/reqlock/redisstore/internal/node"
)

// ScriptOf names the script a command sends, for a client hook that holds
// back one kind of call; the lean and the full acquire are both "acquire".
func ExampleScriptOf() {
	fmt.Printf("%q\n", node.ScriptOf([]any{"get", "reqlock:{k}"}))
	fmt.Printf("%q\n", node.ScriptOf(nil))
	// Output:
	// ""
	// ""
}
