// Package etcdsnippets holds the Go code docs/etcd.md shows, as functions
// that compile: the test in internal/doccheck (root module) fails when a
// block of that page is no longer an excerpt of them. It is a module of its
// own so that the etcd client stays out of reqlock's root module, as
// etcdstore does; test.sh builds it with every module. etcdstore's own
// Example runs the same calls against a real etcd.
package etcdsnippets
