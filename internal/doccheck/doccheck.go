package doccheck

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Block is one fenced Go block of a Markdown file.
type Block struct {
	File string // the Markdown file, as given to Blocks
	Line int    // the line of the opening fence, counted from 1
	Text string // the lines between the fences, each ending in "\n"
}

// Blocks returns the Go blocks of md: those opened by a fence of three
// backticks followed by "go". A fence indented (inside a list item) has that
// indent removed from the lines it holds.
func Blocks(file string, md []byte) []Block {
	var (
		blocks []Block
		cur    *Block
		indent string
		body   strings.Builder
	)
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			if lang == "go" {
				cur = &Block{File: file, Line: n}
				indent = line[:len(line)-len(trimmed)]
				body.Reset()
			} else {
				// Another language's block: skip to its end, so that a
				// fence quoted inside it is not taken for one.
				for sc.Scan() {
					n++
					if isClosing(sc.Text()) {
						break
					}
				}
			}
		case cur != nil && isClosing(line):
			cur.Text = body.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(strings.TrimPrefix(line, indent))
			body.WriteByte('\n')
		}
	}
	return blocks
}

// isClosing reports whether line closes a fenced block: backticks alone, no
// language after them (CommonMark: a closing fence has no info string).
func isClosing(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "```") && strings.Trim(t, "`") == ""
}

// Sources reads the Go files under root that the go command would build or
// test: it skips directories named testdata or vendor or starting with "."
// or "_", and files marked "//go:build ignore". The map is keyed by the
// path relative to root, with forward slashes.
func Sources(root string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := string(b)
		if strings.Contains(src, "\n//go:build ignore\n") || strings.HasPrefix(src, "//go:build ignore\n") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = src
		return nil
	})
	return out, err
}

// Find returns the first source (in path order) that holds b's text as whole
// lines, every non-empty line indented by the same number of tabs (none to
// four), so that a block can be a function's body. A block with no text is
// never found: an empty block shows nothing worth keeping.
func Find(b Block, sources map[string]string) (string, bool) {
	if strings.TrimSpace(b.Text) == "" {
		return "", false
	}
	paths := make([]string, 0, len(sources))
	for p := range sources {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for tabs := 0; tabs <= 4; tabs++ {
		want := "\n" + indent(b.Text, strings.Repeat("\t", tabs))
		for _, p := range paths {
			if strings.Contains("\n"+sources[p], want) {
				return p, true
			}
		}
	}
	return "", false
}

// indent puts prefix before every non-empty line of text: gofmt leaves blank
// lines inside a function body empty, not indented.
func indent(text, prefix string) string {
	if prefix == "" {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
