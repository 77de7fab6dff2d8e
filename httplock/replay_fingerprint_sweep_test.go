package httplock_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/httplock"
)

// The documented layout holds for every length of path and query around
// a one-byte length prefix turning two-byte (128) and around any buffer
// kept for usual requests, for a raw path that differs from the decoded
// one, and for an empty method and body.
func TestDefaultFingerprintLayoutAcrossLengths(t *testing.T) {
	layout := func(fields ...[]byte) []byte {
		var in []byte
		for _, f := range fields {
			in = append(binary.AppendUvarint(in, uint64(len(f))), f...)
		}
		s := sha256.Sum256(in)
		return s[:]
	}
	emptySum := sha256.Sum256(nil)
	for n := 0; n <= 320; n++ {
		path, query := "/"+strings.Repeat("p", n), strings.Repeat("q", 320-n)
		r := &http.Request{Method: "", URL: &url.URL{Path: path, RawQuery: query}}
		if got, want := httplock.DefaultFingerprint(r, nil), layout(nil, []byte(path), []byte(query), emptySum[:]); !bytes.Equal(got, want) {
			t.Fatalf("path %d, query %d bytes: %x, want %x", len(path), len(query), got, want)
		}
	}
	r := &http.Request{Method: "PATCH", URL: &url.URL{Path: "/a/b c", RawPath: "/a%2Fb%20c"}}
	body := []byte("x")
	sum := sha256.Sum256(body)
	if got, want := httplock.DefaultFingerprint(r, body), layout([]byte("PATCH"), []byte("/a%2Fb%20c"), nil, sum[:]); !bytes.Equal(got, want) {
		t.Errorf("raw path: %x, want %x", got, want)
	}
}
