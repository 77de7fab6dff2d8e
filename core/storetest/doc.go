// Package storetest is the store contract of package core as a test suite:
// a store's own test runs it against the store with Run and a Harness, and
// every promise the store makes is checked, by name, as a subtest.
package storetest
