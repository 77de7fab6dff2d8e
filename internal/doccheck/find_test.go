package doccheck_test

import (
	"strings"
	"testing"

	"github.com/reqlock/reqlock/internal/doccheck"
)

var src = map[string]string{
	"a/a.go": "package a\n\nfunc f() {\n\tx := 1\n\n\t_ = x\n}\n",
}

func TestFindMatchesAFunctionBodyDedented(t *testing.T) {
	b := doccheck.Block{Text: "x := 1\n\n_ = x\n"}
	if p, ok := doccheck.Find(b, src); !ok || p != "a/a.go" {
		t.Fatalf("Find = %q, %v; want a/a.go, true", p, ok)
	}
}

func TestFindRefusesADriftedBlock(t *testing.T) {
	for _, text := range []string{
		"x := 2\n\n_ = x\n",   // a value changed
		"x := 1\n_ = x\n",     // a line dropped
		"x := 1\n\n  _ = x\n", // indented unlike the source
		"\tx := 1\n\n_ = x\n", // one line indented more than the rest
		":= 1\n",              // not whole lines
		"",                    // nothing at all
		"func g() {\n}\n",     // in no file
	} {
		if p, ok := doccheck.Find(doccheck.Block{Text: text}, src); ok {
			t.Errorf("Find(%q) found it in %s; want not found", text, p)
		}
	}
}

func TestBlocksTakesOnlyGoFences(t *testing.T) {
	md := strings.Join([]string{
		"# title",
		"```sh",
		"go test ./...",
		"```go",
		"```",
		"```go",
		"x := 1",
		"```",
		"- item",
		"",
		"  ```go",
		"  y := 2",
		"  ```",
		"",
	}, "\n")
	got := doccheck.Blocks("x.md", []byte(md))
	if len(got) != 2 {
		t.Fatalf("got %d blocks, want 2: %+v", len(got), got)
	}
	if got[0].Line != 6 || got[0].Text != "x := 1\n" {
		t.Errorf("first block = %+v", got[0])
	}
	if got[1].Line != 11 || got[1].Text != "y := 2\n" {
		t.Errorf("second block (in a list) = %+v", got[1])
	}
}
