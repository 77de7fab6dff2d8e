package pgstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// Many instances starting at once on an empty database all migrate
// without an error, and again on a migrated one.
func TestMigrateConcurrently(t *testing.T) {
	conn := pgtest.Shared(t).NewDatabase(t)
	for round := range 2 {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			s := pgstore.New(pgtest.OpenPool(t, conn))
			wg.Go(func() { errs <- s.Migrate(context.Background()) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}

// The embedded schema is the file teams ship with their own migrations.
func TestSchemaIsTheFile(t *testing.T) {
	if len(pgstore.Schema) == 0 {
		t.Fatal("empty schema")
	}
	pool := pgtest.Shared(t).Pool(t)
	if _, err := pool.Exec(context.Background(), pgstore.Schema); err != nil {
		t.Fatalf("the schema run by hand: %v", err)
	}
	s := pgstore.New(pool)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate after the schema ran by hand: %v", err)
	}
}
