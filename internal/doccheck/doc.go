// Package doccheck keeps the Go code in the project's Markdown compiled.
//
// Every fenced Go block in README.md and docs/*.md must be an excerpt of a Go
// file the go command builds: a program under examples/, a snippet in
// examples/snippets, a package's Example. The block is matched as whole
// lines, the same on every line but for a common indent of tabs, so a block
// may be the body of a function. A block changed in the Markdown and not in
// the code, or the other way round, is no longer found, and the test of this
// package fails, naming the Markdown file and line. The same test follows
// every relative link of those files to a file that exists.
package doccheck
