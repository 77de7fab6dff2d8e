package pgstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	contract "github.com/reqlock/reqlock/core/store"
)

// inspectSQL reads a key's row without locking or changing it.
const inspectSQL = `SELECT token, reqlock_ms(expires - clock_timestamp()), expires > clock_timestamp(), fence,
	CASE WHEN line_until > clock_timestamp() THEN cardinality(line) ELSE 0 END
	FROM reqlock_locks WHERE key = $1`

// Inspect implements store.Inspector: one read, nothing changes. Fence is
// the last fence handed out while the key has a row: while it is held,
// handed off, or has waiters in line.
func (s *Store) Inspect(ctx context.Context, key string) (contract.Holding, error) {
	var token *string
	var ms, fence int64
	var live bool
	var waiting int
	err := s.run(ctx, stmt{sql: inspectSQL, args: []any{rowKey(key)},
		row: func(r pgx.Row) error { return r.Scan(&token, &ms, &live, &fence, &waiting) }})
	if errors.Is(err, pgx.ErrNoRows) {
		return contract.Holding{}, nil
	}
	if err != nil {
		return contract.Holding{}, s.wrap("inspect", err)
	}
	h := contract.Holding{Fence: uint64(fence), Waiting: waiting}
	if token != nil && live {
		h.Held = true
		h.HandedOff = strings.HasPrefix(*token, "~")
		h.Lease = time.Duration(ms) * time.Millisecond
		h.Holder = contract.HolderOf(*token)
	}
	return h, nil
}
