package httplock

import (
	"bufio"
	"io"
	"net"
	"net/http"

	"github.com/felixge/httpsnoop"
)

// statusNote notes the status a net/http handler sends, for the telemetry
// of New; it is used only while Config.Telemetry is on. httpsnoop wraps the
// handler's writer with it and keeps exactly the optional interfaces of the
// writer beneath (Flusher, Hijacker, io.ReaderFrom, CloseNotifier, …), so
// the handler takes the same paths with telemetry on as off.
type statusNote struct {
	status   int // 0 until the header went out
	hijacked bool
}

// Status is the status sent; a handler that wrote nothing gets 200, and one
// that took the connection over reports none (0).
func (n *statusNote) Status() int {
	switch {
	case n.hijacked:
		return 0
	case n.status == 0:
		return http.StatusOK
	}
	return n.status
}

// sent notes that the response went out with 200 unless a status was set.
func (n *statusNote) sent() {
	if n.status == 0 {
		n.status = http.StatusOK
	}
}

// wrap returns w with n's hooks.
func (n *statusNote) wrap(w http.ResponseWriter) http.ResponseWriter {
	return httpsnoop.Wrap(w, httpsnoop.Hooks{
		WriteHeader: func(next httpsnoop.WriteHeaderFunc) httpsnoop.WriteHeaderFunc {
			return func(code int) {
				// 1xx other than 101 are interim: the final status is still to come.
				if n.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
					n.status = code
				}
				next(code)
			}
		},
		Write: func(next httpsnoop.WriteFunc) httpsnoop.WriteFunc {
			return func(b []byte) (int, error) { n.sent(); return next(b) }
		},
		WriteString: func(next httpsnoop.WriteStringFunc) httpsnoop.WriteStringFunc {
			return func(s string) (int, error) { n.sent(); return next(s) }
		},
		ReadFrom: func(next httpsnoop.ReadFromFunc) httpsnoop.ReadFromFunc {
			return func(r io.Reader) (int64, error) { n.sent(); return next(r) }
		},
		Flush: func(next httpsnoop.FlushFunc) httpsnoop.FlushFunc {
			return func() { n.sent(); next() }
		},
		FlushError: func(next httpsnoop.FlushErrorFunc) httpsnoop.FlushErrorFunc {
			return func() error { n.sent(); return next() }
		},
		Hijack: func(next httpsnoop.HijackFunc) httpsnoop.HijackFunc {
			return func() (net.Conn, *bufio.ReadWriter, error) {
				c, rw, err := next()
				if err == nil {
					n.hijacked = true
				}
				return c, rw, err
			}
		},
	})
}

// ReportingStatus wraps w for Engine.ServeResponse when the router, not w,
// knows the status sent (Echo renders a handler's error after the
// middleware returns): status returns it, or 0 while nothing was sent.
// Telemetry reads it; everything else goes to w, and Unwrap reaches it.
// The writer it returns is a pointer, so adapters may compare it with the
// one Engine.ServeResponse hands their handler.
func ReportingStatus(w http.ResponseWriter, status func() int) http.ResponseWriter {
	return &statusFunc{w, status}
}

type statusFunc struct {
	http.ResponseWriter
	status func() int
}

func (s *statusFunc) Status() int                 { return s.status() }
func (s *statusFunc) Unwrap() http.ResponseWriter { return s.ResponseWriter }
