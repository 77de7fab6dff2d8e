package httplock_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/httplock"
)

// The fingerprint is stored in records: a later version must compute the
// same bytes for the same request, or a retry sent across an upgrade would
// get 422. This is its documented layout, hashed field by field.
func TestDefaultFingerprintLayout(t *testing.T) {
	layout := func(method, path, query string, body []byte) []byte {
		h := sha256.New()
		for _, f := range [][]byte{[]byte(method), []byte(path), []byte(query), func() []byte { s := sha256.Sum256(body); return s[:] }()} {
			h.Write(binary.AppendUvarint(nil, uint64(len(f))))
			h.Write(f)
		}
		return h.Sum(nil)
	}
	long := strings.Repeat("x", 300) // past any buffer kept for usual requests
	for _, c := range []struct{ target, path, query string }{
		{"/orders", "/orders", ""},
		{"/orders/7?a=1&b=%20", "/orders/7", "a=1&b=%20"},
		{"/" + long + "?" + long, "/" + long, long},
		{"/caf%C3%A9", "/caf%C3%A9", ""},
	} {
		body := []byte(`{"amount":4200}`)
		r := httptest.NewRequest("POST", c.target, nil)
		got := httplock.DefaultFingerprint(r, body)
		if want := layout("POST", c.path, c.query, body); !bytes.Equal(got, want) {
			t.Errorf("%s: fingerprint %x, want %x", c.target, got, want)
		}
	}
}
