package main

import (
	"strings"
	"testing"

	"github.com/reqlock/reqlock/memorystore"
)

// DATABASE_URL picks Postgres before anything else; without it the store
// is storeenv's, the memory store when REDIS_URL is unset too.
func TestOpenStorePicksByEnvironment(t *testing.T) {
	t.Setenv("REDIS_URL", "")
	t.Setenv("DATABASE_URL", "")
	s, which, closeStore, err := openStore()
	if err != nil {
		t.Fatal(err)
	}
	closeStore()
	if _, ok := s.(*memorystore.Store); !ok || !strings.Contains(which, "memory") {
		t.Fatalf("without DATABASE_URL or REDIS_URL: %T, %q; want the memory store", s, which)
	}
	// Nothing listens on port 1: the pick is Postgres, and it says it
	// cannot reach it.
	t.Setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=1")
	t.Setenv("REDIS_URL", "redis://127.0.0.1:1/0")
	_, _, _, err = openStore()
	if err == nil || !strings.Contains(err.Error(), "postgres at 127.0.0.1") {
		t.Fatalf("with DATABASE_URL on a closed port: %v, want Postgres's error", err)
	}
	t.Setenv("DATABASE_URL", "::not a url")
	if _, _, _, err := openStore(); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("with a bad DATABASE_URL: %v", err)
	}
}
