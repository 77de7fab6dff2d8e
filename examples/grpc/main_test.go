package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example does what its comments say: one order, a retry replayed,
// the key refused for another request.
func TestRun(t *testing.T) {
	t.Setenv("REDIS_URL", "")
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`first call                 "order 1: book"`,
		`retry after it ended       "order 1: book", replayed`,
		"same key, another request  FailedPrecondition",
		"orders created: 1",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
