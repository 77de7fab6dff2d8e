package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/examples/internal/storeenv"
	"github.com/reqlock/reqlock/pgstore"
)

// openStore picks the demo's store: PostgreSQL when DATABASE_URL is set
// (postgres://user@host:5432/db), else what storeenv picks (Redis when
// REDIS_URL is set, else the memory store). The demo is a module of its
// own so that pgx reaches only its build, not the build of every user of
// reqlock.
func openStore() (core.Store, string, func(), error) {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return storeenv.Open()
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, "", nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	// A database that is down fails a request within its deadline, not
	// after the driver's own long dial.
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, "", nil, fmt.Errorf("postgres at %s: %w", cfg.ConnConfig.Host, err)
	}
	s := pgstore.New(pool)
	if err := s.Migrate(ctx); err != nil {
		pool.Close()
		return nil, "", nil, fmt.Errorf("postgres at %s: %w", cfg.ConnConfig.Host, err)
	}
	return s, fmt.Sprintf("PostgreSQL at %s:%d", cfg.ConnConfig.Host, cfg.ConnConfig.Port), pool.Close, nil
}
