package pgstore_test

import (
	"context"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/storetest"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// With WithTx, the parts of the contract a transaction changes: records,
// runs and units (the rest is WithTx's to leave as TestConformance checks
// it).
func TestConformanceWithTx(t *testing.T) {
	srv := pgtest.Shared(t)
	conn := srv.NewDatabase(t)
	if err := pgstore.New(pgtest.OpenPool(t, conn)).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	waive := map[string]string{}
	for _, g := range []string{"exclusion", "fences", "stale", "lease", "lines", "cancel", "inspect", "contract"} {
		waive[g] = "WithTx changes nothing here: TestConformance checks it"
	}
	storetest.Run(t, storetest.Harness{
		New: func(t testing.TB) core.Store {
			return pgstore.New(pgtest.OpenPool(t, conn), pgstore.WithTx())
		},
		Waive: waive,
	})
}
