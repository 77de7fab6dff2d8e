package doccheck_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/reqlock/reqlock/internal/doccheck"
)

func TestLinksTakesRepositoryPathsOnly(t *testing.T) {
	md := "See [a](docs/a.md#x), [b](https://x.y/b) and [c](#here).\n" +
		"```go\n// [d](not/a/link.md)\n```\n" +
		"[e](../LICENSE) [f](mailto:a@b.c)\n"
	want := []doccheck.Link{{Line: 1, Target: "docs/a.md"}, {Line: 5, Target: "../LICENSE"}}
	if got := doccheck.Links([]byte(md)); !reflect.DeepEqual(got, want) {
		t.Errorf("Links = %+v; want %+v", got, want)
	}
}

func TestMarkdownLinksResolve(t *testing.T) {
	n := 0
	for _, file := range markdown(t) {
		md, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, file)
		for _, l := range doccheck.Links(md) {
			n++
			if _, err := os.Stat(filepath.Join(filepath.Dir(file), l.Target)); err != nil {
				t.Errorf("%s:%d: the link to %s leads nowhere", name, l.Line, l.Target)
			}
		}
	}
	if n == 0 {
		t.Error("no links found in README.md and docs/: the extraction is broken")
	}
}
