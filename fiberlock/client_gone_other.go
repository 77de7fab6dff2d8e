//go:build !unix

package fiberlock

import "net"

// peeker cannot look at a socket without reading from it here: a client
// that leaves is not noticed.
func peeker(net.Conn) (func() (gone bool), bool) { return nil, false }
