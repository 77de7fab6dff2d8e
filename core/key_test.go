package core_test

import (
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/internal/lockertest"
	"github.com/reqlock/reqlock/memorystore"
)

var storeKeyShape = lockertest.StoreKeyWithPrefix("reqlock:")

func TestStoreKeyStaysInNamespaceAndSlot(t *testing.T) {
	l := newLocker(memorystore.New())
	seen := map[string]string{}
	for _, k := range []string{"a", "b", "{}", "}{", "{a}", "*", "\n", "\xff", "reqlock:{x}", "a\x00b", "a\x00c"} {
		sk, err := l.StoreKey(k)
		if err != nil {
			t.Fatal(err)
		}
		if !storeKeyShape.MatchString(sk) {
			t.Fatalf("%q became %q", k, sk)
		}
		if prev, dup := seen[sk]; dup {
			t.Fatalf("%q and %q share store key %q", prev, k, sk)
		}
		seen[sk] = k
	}
}

func TestWithPrefixRejectsBraces(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("WithPrefix accepted a brace")
		}
	}()
	core.WithPrefix("app{1}:")
}

func FuzzStoreKey(f *testing.F) {
	for _, s := range []string{"a", "{", "}", "{}", "\xff", "user:1\n", "*?[]"} {
		f.Add(s)
	}
	l := newLocker(memorystore.New())
	f.Fuzz(func(t *testing.T, key string) {
		sk, err := l.StoreKey(key)
		if key == "" {
			if err == nil {
				t.Fatal("empty key accepted")
			}
			return
		}
		if err != nil || !storeKeyShape.MatchString(sk) {
			t.Fatalf("%q became %q, %v", key, sk, err)
		}
	})
}
