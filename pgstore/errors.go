package pgstore

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/puddle/v2"

	"github.com/reqlock/reqlock/core/store"
	"github.com/reqlock/reqlock/internal/outage"
)

// errCancelled is an acquire that landed after it was cancelled: it took
// nothing. The Locker treats it as any failure of the store, and cancels
// again, which finds nothing.
var errCancelled = errors.New("pgstore: acquire landed after it was cancelled")

// errRefenceLost is an acquire whose row was gone before its fence could be
// drawn again (see takeSQL): its outcome is for the caller to undo.
var errRefenceLost = errors.New("pgstore: acquire: the key was lost before its fence was drawn")

// errNotListening is Hold without a connection to listen on: the waiter
// polls instead.
var errNotListening = errors.New("pgstore: not listening for releases")

// wrap names the operation in err, and makes an error of a closed pool
// store.ErrStoreClosed: nothing sent through it can land any more. An
// outage says which server, at which address, and whether it refused
// connections, closed one or went silent (outage.Explain): pgx alone says
// "unexpected EOF" or "timeout: context deadline exceeded".
func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, puddle.ErrClosedPool) {
		return fmt.Errorf("pgstore: %s: %w: %w", op, store.ErrStoreClosed, err)
	}
	if c := s.pool.Config().ConnConfig; !strings.HasPrefix(c.Host, "/") { // not a Unix socket
		err = outage.Explain("PostgreSQL", net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))), err)
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}
