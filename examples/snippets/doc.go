// Package snippets holds the Go code shown in README.md and docs/, as
// functions that compile and that its tests run on the memory store. The
// Markdown shows excerpts of these files (function bodies, dedented); the
// test in internal/doccheck fails when an excerpt no longer matches, so the
// docs cannot drift from code that builds.
//
// Each function is named after the section that shows it. The handlers and
// auth middlewares the excerpts call are in handlers.go.
package snippets
