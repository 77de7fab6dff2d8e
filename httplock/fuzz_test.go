package httplock_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

func FuzzFromHeader(f *testing.F) {
	for _, s := range []string{"", "alice", "a, b", "{tag}", strings.Repeat("x", 2000), "\xff\x00"} {
		f.Add(s)
	}
	fn := httplock.FromHeader("X-Key")
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest("POST", "/", nil)
		r.Header["X-Key"] = []string{v}
		k, err := fn(r)
		if v == "" {
			if k != "" || !errors.Is(err, httplock.ErrEmptyValue) {
				t.Fatalf("empty header: %q, %v; want ErrEmptyValue", k, err)
			}
			return
		}
		if k != v || err != nil {
			t.Fatalf("FromHeader = %q, %v; want %q", k, err, v)
		}
	})
}

func FuzzFromQuery(f *testing.F) {
	for _, s := range []string{"", "k=1", "k=1&k=2", "k=%zz", "a=1&k=%7B%7D", "k", ";k=1", "k=a+b"} {
		f.Add(s)
	}
	fn := httplock.FromQuery("k")
	f.Fuzz(func(t *testing.T, raw string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.URL.RawQuery = raw
		k, err := fn(r)
		vs, perr := url.ParseQuery(raw)
		switch n := len(vs["k"]); {
		case perr != nil:
			if k != "" || !errors.Is(err, httplock.ErrQuerySyntax) {
				t.Fatalf("unparsable query: %q, %v; want ErrQuerySyntax", k, err)
			}
		case n > 1 && err == nil:
			t.Fatalf("%d values, no error", n)
		case n == 1 && vs["k"][0] == "" && !errors.Is(err, httplock.ErrEmptyValue):
			t.Fatalf("empty value: %q, %v; want ErrEmptyValue", k, err)
		case n == 1 && vs["k"][0] != "" && (err != nil || k != vs["k"][0]):
			t.Fatalf("FromQuery = %q, %v; want %q", k, err, vs["k"][0])
		case n == 0 && (err != nil || k != ""):
			t.Fatalf("FromQuery = %q, %v; want nothing", k, err)
		}
	})
}

func FuzzFromPathValue(f *testing.F) {
	for _, s := range []string{"", "42", "a/b", "{id}", "\x00"} {
		f.Add(s)
	}
	fn := httplock.FromPathValue("id")
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.SetPathValue("id", v)
		if k, err := fn(r); k != v || err != nil {
			t.Fatalf("FromPathValue = %q, %v; want %q", k, err, v)
		}
	})
}

func FuzzFromContext(f *testing.F) {
	f.Add("alice", int64(42))
	f.Add("", int64(-1))
	f.Add("\xff", int64(0))
	str, num := httplock.FromContext(ctxKey{}), httplock.FromContext(numKey{})
	f.Fuzz(func(t *testing.T, s string, n int64) {
		r := httptest.NewRequest("GET", "/", nil)
		ctx := context.WithValue(context.WithValue(r.Context(), ctxKey{}, s), numKey{}, n)
		r = r.WithContext(ctx)
		if k, err := str(r); k != s || err != nil {
			t.Fatalf("string value: %q, %v", k, err)
		}
		if k, err := num(r); k != strconv.FormatInt(n, 10) || err != nil {
			t.Fatalf("int64 value: %q, %v", k, err)
		}
	})
}

type numKey struct{}

// printableASCII reports whether s is all printable ASCII: what an
// sf-string can hold.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// quote writes s as an sf-string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{`"abc"`, `abc`, `""`, `"a\"b"`, `"k";p=1`, `"k";p=?1;q="x"`, `"\`, `"k";b=:YQ==:`, "\"\x7f\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		k, err := httplock.ParseIdempotencyKey(v)
		if err == nil {
			if k == "" {
				t.Fatal("empty key accepted")
			}
			for i := 0; i < len(k); i++ {
				if k[i] < 0x20 || k[i] > 0x7e {
					t.Fatalf("key %q has byte %#x outside printable ASCII", k, k[i])
				}
			}
			if again, err := httplock.ParseIdempotencyKey(quote(k)); again != k || err != nil {
				t.Fatalf("re-quoted %q parses to %q, %v", k, again, err)
			}
			// What the draft's form says, the lenient parse says too.
			if lk, err := httplock.ParseIdempotencyKeyLenient(v); lk != k || err != nil {
				t.Fatalf("lenient parse of %q: %q, %v; strict: %q", v, lk, err, k)
			}
		}
		// A key the lenient parse takes plain is the same key quoted.
		if lk, err := httplock.ParseIdempotencyKeyLenient(v); err == nil && printableASCII(lk) {
			if again, err := httplock.ParseIdempotencyKeyLenient(quote(lk)); again != lk || err != nil {
				t.Fatalf("%q is %q plain, but %q, %v quoted", v, lk, again, err)
			}
		}
		// Any printable text survives quoting.
		printable := v != ""
		for i := 0; i < len(v); i++ {
			printable = printable && v[i] >= 0x20 && v[i] <= 0x7e
		}
		if printable {
			if got, err := httplock.ParseIdempotencyKey(quote(v)); got != v || err != nil {
				t.Fatalf("quote(%q) parses to %q, %v", v, got, err)
			}
		}
	})
}

var storeKeyShape = regexp.MustCompile(`^reqlock:\{[A-Za-z0-9_-]{22}\}$`)

// FuzzLockKey checks scope hashing: distinct (scope, key) pairs never share
// a lock key, and what reaches the store is the prefix and a hash only.
func FuzzLockKey(f *testing.F) {
	f.Add("POST /orders/{id}", "42", "POST /orders/{id}", "43")
	f.Add("a", ":b", "a:", "b")
	f.Add("", "1:ab", "1:a", "b")
	f.Add("x\x00", "y", "x", "\x00y")
	l := core.NewLocker(memorystore.New())
	f.Fuzz(func(t *testing.T, s1, k1, s2, k2 string) {
		a, b := httplock.LockKey(s1, k1), httplock.LockKey(s2, k2)
		if (a == b) != (s1 == s2 && k1 == k2) {
			t.Fatalf("LockKey(%q, %q) = %q, LockKey(%q, %q) = %q", s1, k1, a, s2, k2, b)
		}
		skey, err := l.StoreKey(a)
		if err != nil || !storeKeyShape.MatchString(skey) {
			t.Fatalf("store key %q, %v", skey, err)
		}
	})
}

// FuzzMiddlewareKey drives any key through the middleware: it locks (200)
// or refuses (400), and never fails otherwise.
func FuzzMiddlewareKey(f *testing.F) {
	for _, s := range []string{"", "alice", "{}", strings.Repeat("k", httplock.MaxKeyLen), strings.Repeat("k", httplock.MaxKeyLen+1)} {
		f.Add(s)
	}
	l := core.NewLocker(memorystore.New())
	h := httplock.New(httplock.Config{Locker: l, Key: httplock.FromHeader("X-Key"), Scope: "fuzz"})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := core.FromContext(r.Context()); !ok && r.Header.Get("X-Key") != "" {
			w.WriteHeader(http.StatusInternalServerError) // a keyed request ran without its lock
		}
	}))
	f.Fuzz(func(t *testing.T, key string) {
		r := httptest.NewRequest("POST", "/", nil)
		r.Header["X-Key"] = []string{key}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		want := http.StatusOK
		if key == "" || len(key) > httplock.MaxKeyLen { // a header sent empty, a key too long
			want = http.StatusBadRequest
		}
		if w.Code != want {
			t.Fatalf("key of %d bytes: %d, want %d", len(key), w.Code, want)
		}
	})
}
