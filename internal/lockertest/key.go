package lockertest

import "regexp"

// StoreKeyWithPrefix matches a lock key under prefix p, or its fence
// counter.
func StoreKeyWithPrefix(p string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(p) + `\{[A-Za-z0-9_-]{22}\}(:fence)?$`)
}
