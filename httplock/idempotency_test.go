package httplock_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
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

// The lenient parse takes the draft's quoted form exactly as the strict
// one does, and a plain value as it is: both forms of one key are one key.
func TestParseIdempotencyKeyLenient(t *testing.T) {
	valid := map[string]string{
		`"pay-1"`:                              "pay-1",
		`pay-1`:                                "pay-1",
		`  pay-1 	`:                            "pay-1",
		`"k";v=1`:                              "k",
		`"quote \" and \\"`:                    `quote " and \`,
		`a b`:                                  "a b",
		`k;v=1`:                                "k;v=1",
		`8e03978e-40d5-43e8-bc93-6894a57f9324`: "8e03978e-40d5-43e8-bc93-6894a57f9324",
	}
	for in, want := range valid {
		got, err := httplock.ParseIdempotencyKeyLenient(in)
		if err != nil || got != want {
			t.Errorf("ParseIdempotencyKeyLenient(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	invalid := []string{``, `  `, `""`, `"unterminated`, `"k" "j"`, `"k"x`, `a,b`, `"a", "b"`, `pay-1"`, `a"b`}
	for _, in := range invalid {
		if got, err := httplock.ParseIdempotencyKeyLenient(in); !errors.Is(err, httplock.ErrIdempotencyKeySyntax) {
			t.Errorf("ParseIdempotencyKeyLenient(%q) = %q, %v; want a syntax error", in, got, err)
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
	if _, err := httplock.StrictIdempotencyKey()(r); !errors.Is(err, httplock.ErrMultipleValues) {
		t.Fatalf("two headers, strict: %v", err)
	}
}

// Over HTTP: by default a plain Idempotency-Key is the same key as the
// quoted one, so it finds the quoted request in flight (409); the strict
// extractor answers it 400 and takes the quoted one only.
func TestIdempotencyKeyForms(t *testing.T) {
	locker := core.NewLocker(memorystore.New())
	held, release := make(chan struct{}), make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("hold") {
			held <- struct{}{}
			<-release
		}
	})
	mux := http.NewServeMux()
	mux.Handle("POST /lenient", httplock.New(httplock.Config{Locker: locker, Key: httplock.IdempotencyKey(), Scope: "pay"})(handler))
	mux.Handle("POST /strict", httplock.New(httplock.Config{Locker: locker, Key: httplock.StrictIdempotencyKey(), Scope: "pay"})(handler))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()
	send := func(path, key string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+path, nil)
		req.Header.Set(httplock.HeaderIdempotencyKey, key)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var p httplock.Problem
		_ = json.NewDecoder(res.Body).Decode(&p)
		return res.StatusCode, p.Code
	}

	done := make(chan int)
	go func() { s, _ := send("/lenient?hold", `"pay-1"`); done <- s }()
	<-held
	for _, c := range []struct {
		path, key string
		status    int
		code      string
	}{
		{"/lenient", `pay-1`, http.StatusConflict, "locked"},
		{"/lenient", `"pay-1"`, http.StatusConflict, "locked"},
		{"/lenient", `pay-2`, http.StatusOK, ""},
		{"/strict", `pay-1`, http.StatusBadRequest, "key_invalid"},
		{"/strict", `"pay-1"`, http.StatusConflict, "locked"},
		{"/strict", `"pay-2"`, http.StatusOK, ""},
	} {
		if status, code := send(c.path, c.key); status != c.status || code != c.code {
			t.Errorf("%s with %s: %d %q, want %d %q", c.path, c.key, status, code, c.status, c.code)
		}
	}
	close(release)
	if s := <-done; s != http.StatusOK {
		t.Fatalf("the held request got %d", s)
	}
}
