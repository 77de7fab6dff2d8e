//go:build unix

package fiberlock

import (
	"errors"
	"net"
	"syscall"
)

// peeker returns a func that reports whether conn's peer has closed it,
// for a connection on a socket: a non-blocking MSG_PEEK read that leaves
// any bytes where they are. Bytes waiting (a pipelined request) count as a
// client still there.
func peeker(conn net.Conn) (func() (gone bool), bool) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	var b [1]byte
	return func() bool {
		var n int
		var rerr error
		if err := rc.Control(func(fd uintptr) {
			n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		}); err != nil {
			return true // the connection is closed on this side already
		}
		switch {
		case rerr == nil:
			return n == 0 // end of file
		case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EINTR):
			return false
		}
		return true // reset, or another error: nobody is reading
	}, true
}
