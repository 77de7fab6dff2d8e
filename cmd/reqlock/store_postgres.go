package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/pgstore"
)

// openPostgres builds a pool of one connection on url. It does not migrate:
// the command only reads, and a database without reqlock's tables says so
// when inspected.
func openPostgres(url string, timeout time.Duration) (openedStore, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message leaves the password out.
		return openedStore{}, fmt.Errorf("DATABASE_URL: %w", err)
	}
	cfg.MaxConns = 1
	cfg.ConnConfig.ConnectTimeout = timeout
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return openedStore{}, fmt.Errorf("DATABASE_URL: %w", err)
	}
	where := "PostgreSQL at " + net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port)))
	return openedStore{store: pgstore.New(pool), where: where, close: pool.Close}, nil
}
