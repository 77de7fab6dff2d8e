package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/core/storetest/faultproxy"
	"github.com/reqlock/reqlock/internal/leadtest"
	"github.com/reqlock/reqlock/internal/pgtest"
	"github.com/reqlock/reqlock/pgstore"
)

// A Lead that gives up while its attempt in line is on its way leaves the
// line over the connection it has (leadtest.GiveUpInLine).
func TestLeadGiveUpInLine(t *testing.T) {
	srv := pgtest.Shared(t)
	conn := srv.NewDatabase(t)
	if err := pgstore.New(pgtest.OpenPool(t, conn)).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	link := faultproxy.Start(t, srv.Addr)
	linked := pgstore.New(pgtest.OpenPool(t, strings.Replace(conn, srv.Addr, link.Addr(), 1)))
	leadtest.GiveUpInLine(t, func() store.Store { return pgstore.New(pgtest.OpenPool(t, conn)) }, linked, link)
}
