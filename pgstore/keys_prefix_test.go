package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
)

// A key is the Locker's prefix followed by a hash: the user's text is
// hashed, but the prefix reaches the store as it is, and core.WithPrefix
// takes any string without braces, as Redis and the memory store do. A
// text column refuses a NUL byte and bytes that are not UTF-8, and a
// btree an entry over about 2.7 KB that does not compress: such keys must
// work all the same.
func TestPrefixesOtherStoresTake(t *testing.T) {
	raw := make([]byte, 3000)
	_, _ = rand.Read(raw)
	long := base64.RawURLEncoding.EncodeToString(raw) + ":"
	for name, prefix := range map[string]string{
		"NUL":                  "app\x00:",
		"Latin-1":              "caf\xe9:",
		"4 KB, incompressible": long,
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			l := core.NewLocker(s, core.WithPrefix(prefix))
			lk, err := l.TryObtain(ctx, "order-1")
			if err != nil {
				t.Fatalf("TryObtain under a prefix of %d bytes: %.200v", len(prefix), err)
			}
			if err := lk.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
