package pgstore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

// Keys, tokens, waiters and records reach SQL only as parameters: text
// that would break out of a quoted string, a comment, a NUL-free binary
// record and a huge key are stored and found as they are.
func TestHostileTextIsOnlyParameters(t *testing.T) {
	s, pool := open(t)
	ctx := context.Background()
	hostile := []string{
		`reqlock:{'); DROP TABLE reqlock_locks; --}`,
		`reqlock:{"} $$ ; SELECT pg_sleep(10); $$`,
		"reqlock:{" + strings.Repeat("é\\'x", 4096) + "}",
	}
	for _, key := range hostile {
		l := store.Lease{Key: key, Token: `t'; --`, TTL: time.Minute}
		if _, err := s.Acquire(ctx, l); err != nil {
			t.Fatalf("Acquire of %.40q: %v", key, err)
		}
		waiter := `i'/w"; --`
		if _, _, err := s.AcquireQueued(ctx, store.Lease{Key: key, Token: "x", TTL: time.Minute}, waiter, false); !isNotObtained(err) {
			t.Fatalf("AcquireQueued: %v", err)
		}
		rec := []byte("\x00\xff'; DROP TABLE reqlock_records; --")
		if err := s.ReleaseRecording(ctx, key, l.Token, rec, time.Minute); err != nil {
			t.Fatalf("ReleaseRecording: %v", err)
		}
		_, got, err := s.AcquireOrRecord(ctx, store.Lease{Key: key, Token: "y", TTL: time.Minute})
		if err != nil || !bytes.Equal(got, rec) {
			t.Fatalf("record %q, %v; want %q", got, err, rec)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM reqlock_records").Scan(&n); err != nil || n != len(hostile) {
		t.Fatalf("%d records, %v; want %d", n, err, len(hostile))
	}
}

func isNotObtained(err error) bool {
	_, ok := core.HolderTTL(err)
	return ok
}
