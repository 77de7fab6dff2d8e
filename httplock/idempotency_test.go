package httplock_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/reqlock/reqlock/httplock"
)

func TestParseIdempotencyKey(t *testing.T) {
	valid := map[string]string{
		`"8e03978e-40d5-43e8-bc93-6894a57f9324"`: "8e03978e-40d5-43e8-bc93-6894a57f9324",
		`"a b"`:                                  "a b",
		`"quote \" and \\"`:                      `quote " and \`,
		`  "padded"  `:                           "padded",
		`"k";v=1`:                                "k",
		`"k"; a; b=?0;c=-1.5`:                    "k",
		`"k";tok=foo/bar:baz`:                    "k",
		`"k";bin=:aGVsbG8=:`:                     "k",
		`"k";s="x\"y";d=@1700`:                   "k",
		`"k";ds=%"caf%c3%a9"`:                    "k",
	}
	for in, want := range valid {
		got, err := httplock.ParseIdempotencyKey(in)
		if err != nil || got != want {
			t.Errorf("ParseIdempotencyKey(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	invalid := []string{
		``, `k`, `8e03978e`, `""`, `"unterminated`, `"bad \n escape"`, `"tab	inside"`,
		`"k" "j"`, `"k",  "j"`, `"k";`, `"k";Upper=1`, `"k";v=`, `"k";v=1.2345`,
		`"k";v=1234567890123456`, `"k";b=?2`, `"k";bin=:abc`, "\"caf\xc3\xa9\"", `'k'`, `"k"x`,
	}
	for _, in := range invalid {
		if got, err := httplock.ParseIdempotencyKey(in); !errors.Is(err, httplock.ErrIdempotencyKeySyntax) {
			t.Errorf("ParseIdempotencyKey(%q) = %q, %v; want a syntax error", in, got, err)
		}
	}
}

func TestIdempotencyKeyHeader(t *testing.T) {
	r := httptest.NewRequest("POST", "/", nil)
	if k, err := httplock.IdempotencyKey()(r); k != "" || err != nil {
		t.Fatalf("no header: %q, %v", k, err)
	}
	r.Header.Add(httplock.HeaderIdempotencyKey, `"a"`)
	if k, err := httplock.IdempotencyKey()(r); k != "a" || err != nil {
		t.Fatalf("one header: %q, %v", k, err)
	}
	r.Header.Add(httplock.HeaderIdempotencyKey, `"b"`)
	if _, err := httplock.IdempotencyKey()(r); !errors.Is(err, httplock.ErrMultipleValues) {
		t.Fatalf("two headers: %v", err)
	}
}
