package pgstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	contract "github.com/reqlock/reqlock/core/store"
)

// inspectSQL reads a key's row without locking or changing it. Its last
// column says whether a lapsed holder still keeps the key: a transaction
// that guarded the row (FOR KEY SHARE, see guardSQL) is still running, and
// every takeover is refused until it ends. PostgreSQL shows a row's lockers
// only in its xmax: the locker's transaction id, or, once a second
// transaction locked the row too (a refused takeover does), a multixact
// whose members say their modes. A transaction still running holds a lock
// on its own id (pg_locks). The multixact is read only when xmax is one
// PostgreSQL still keeps (pg_get_multixact_members fails on any other).
// A plain xmax's mode cannot be read without an extension, so a reqlock
// function running on a lapsed row reads as guarded for that instant.
const inspectSQL = `SELECT token, reqlock_ms(expires - clock_timestamp()), expires > clock_timestamp(), fence,
	CASE WHEN line_until > clock_timestamp() THEN cardinality(line) ELSE 0 END,
	token IS NOT NULL AND expires <= clock_timestamp() AND (
		EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'transactionid' AND k.transactionid = l.xmax)
		OR CASE WHEN mxid_age(l.xmax) > 0 AND mxid_age(l.xmax) <= (SELECT mxid_age(datminmxid) FROM pg_database WHERE datname = current_database())
			THEN EXISTS (SELECT 1 FROM pg_get_multixact_members(l.xmax) m, pg_locks k
				WHERE m.mode = 'keysh' AND k.locktype = 'transactionid' AND k.transactionid = m.xid)
			ELSE false END)
	FROM reqlock_locks l WHERE key = $1`

// Inspect implements store.Inspector: one read, nothing changes. Fence is
// the last fence handed out while the key has a row: while it is held,
// handed off, or has waiters in line. A holder whose lease ran out while a
// transaction it guarded is open is Held and Expired, with no lease left:
// takeovers are refused until that transaction ends.
func (s *Store) Inspect(ctx context.Context, key string) (contract.Holding, error) {
	var token *string
	var ms, fence int64
	var live, guarded bool
	var waiting int
	err := s.run(ctx, stmt{sql: inspectSQL, args: []any{rowKey(key)},
		row: func(r pgx.Row) error { return r.Scan(&token, &ms, &live, &fence, &waiting, &guarded) }})
	if errors.Is(err, pgx.ErrNoRows) {
		return contract.Holding{}, nil
	}
	if err != nil {
		return contract.Holding{}, s.wrap("inspect", err)
	}
	h := contract.Holding{Fence: uint64(fence), Waiting: waiting}
	if token != nil && (live || guarded) {
		h.Held = true
		h.Expired = !live
		h.HandedOff = strings.HasPrefix(*token, "~")
		if live {
			h.Lease = time.Duration(ms) * time.Millisecond
		}
		h.Holder = contract.HolderOf(*token)
	}
	return h, nil
}
