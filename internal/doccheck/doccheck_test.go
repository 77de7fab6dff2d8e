package doccheck_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/internal/doccheck"
)

// root is the repository, seen from this package's directory.
const root = "../.."

// markdown returns the Markdown files whose Go blocks must compile.
func markdown(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

func TestMarkdownGoBlocksAreCompiledCode(t *testing.T) {
	sources, err := doccheck.Sources(root)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, file := range markdown(t) {
		md, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, file)
		for _, b := range doccheck.Blocks(name, md) {
			total++
			if _, ok := doccheck.Find(b, sources); !ok {
				t.Errorf("%s:%d: this Go block is not an excerpt of any Go file in the repository: "+
					"make it one (examples/snippets holds the README's and docs' code), "+
					"or bring the two back in line", b.File, b.Line)
			}
		}
	}
	if total < 5 {
		t.Errorf("found %d Go blocks in README.md and docs/: the extraction is broken or the docs lost their code", total)
	}
}

func TestREADMEOpensWithACompleteProgram(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(md), "\n"); n >= 300 {
		t.Errorf("README.md has %d lines; it must stay under 300 (depth goes to docs/)", n)
	}
	blocks := doccheck.Blocks("README.md", md)
	if len(blocks) == 0 {
		t.Fatal("README.md has no Go block")
	}
	first := blocks[0]
	end := first.Line + strings.Count(first.Text, "\n") + 1
	if end > 40 {
		t.Errorf("README.md's first Go block ends on line %d; the complete example must fit in the first 40 lines", end)
	}
	if !strings.HasPrefix(first.Text, "package main\n") || !strings.Contains(first.Text, "\nfunc main() {\n") {
		t.Errorf("README.md's first Go block is not a complete program (package main with func main):\n%s", first.Text)
	}
	sources, err := doccheck.Sources(root)
	if err != nil {
		t.Fatal(err)
	}
	// A whole program matched at no indent: the file is that program.
	if p, ok := doccheck.Find(first, sources); !ok || !strings.HasSuffix(sources[p], first.Text) {
		t.Errorf("README.md's first Go block is not the end of a compiled program (found: %q)", p)
	}
}
