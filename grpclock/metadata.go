package grpclock

import (
	"context"

	"google.golang.org/grpc/metadata"
)

// incoming is a call's metadata as httplock's key functions read it:
// FromHeader("idempotency-key") and IdempotencyKey find their entry in it
// (names are case-insensitive; a "-bin" entry gives its decoded bytes).
type incoming struct{ ctx context.Context }

// HeaderValues returns the values of the incoming metadata entry name,
// without copying the rest of the metadata.
func (m *incoming) HeaderValues(name string) []string {
	return metadata.ValueFromIncomingContext(m.ctx, name)
}

// RawQuery is never asked: httplock.FromQuery refuses a call.
func (*incoming) RawQuery() string { return "" }
