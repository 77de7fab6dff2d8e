package pgstore

import (
	"strings"
	"testing"
)

// Keys the column takes are stored as they are; the rest become distinct
// digests of one size, which never collide with a key stored as it is.
func TestRowKey(t *testing.T) {
	for _, k := range []string{"reqlock:{abc}", "é:{x}", strings.Repeat("a", maxRowKey)} {
		if got := rowKey(k); got != k {
			t.Errorf("rowKey(%.20q) = %.20q, want it unchanged", k, got)
		}
	}
	seen := map[string]string{}
	for _, k := range []string{"a\x00:{x}", "caf\xe9:{x}", strings.Repeat("a", maxRowKey+1), digestMark + "x", digestMark + "y"} {
		got := rowKey(k)
		if !strings.HasPrefix(got, digestMark) || len(got) != len(digestMark)+64 {
			t.Errorf("rowKey(%.20q) = %q, want a digest", k, got)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("rowKey(%.20q) = rowKey(%.20q)", k, other)
		}
		seen[got] = k
	}
}
