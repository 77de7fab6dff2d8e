package doccheck

import (
	"regexp"
	"strings"
)

// Link is one relative link of a Markdown file.
type Link struct {
	Line   int    // counted from 1
	Target string // the path as written, without its #fragment
}

// inlineLink matches [text](target): the target up to a space, a quote or
// the closing parenthesis.
var inlineLink = regexp.MustCompile(`\]\(([^)\s"]+)`)

// Links returns md's links to files of the repository: not those with a
// scheme (https:, mailto:), nor those within the page (#fragment alone), nor
// those inside fenced blocks.
func Links(md []byte) []Link {
	var out []Link
	fenced := false
	for i, line := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, ":") {
				continue
			}
			out = append(out, Link{Line: i + 1, Target: target})
		}
	}
	return out
}
