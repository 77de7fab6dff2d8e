package connectlock

import "net/http"

// header is a call's request header as httplock's key functions read it:
// FromHeader and IdempotencyKey find Connect's, gRPC's and gRPC-Web's
// metadata there.
type header http.Header

// HeaderValues returns the lines of the header name (canonical).
func (h header) HeaderValues(name string) []string { return h[name] }

// RawQuery is never asked: httplock.FromQuery refuses a call.
func (header) RawQuery() string { return "" }
