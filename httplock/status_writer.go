package httplock

import (
	"bufio"
	"net"
	"net/http"
)

// statusWriter notes the status a handler sends, for the telemetry of the
// net/http middleware; it is used only while Config.Telemetry is on.
// Everything goes on to the writer beneath at once; Flush, Hijack and
// http.ResponseController reach it as without the wrapper.
type statusWriter struct {
	w      http.ResponseWriter
	status int // 0 until the header went out
}

// Status is the status sent; a handler that wrote nothing gets 200.
func (s *statusWriter) Status() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}

func (s *statusWriter) Header() http.Header { return s.w.Header() }

func (s *statusWriter) WriteHeader(code int) {
	// 1xx other than 101 are interim: the final status is still to come.
	if s.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		s.status = code
	}
	s.w.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.w.Write(b)
}

func (s *statusWriter) WriteString(str string) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if sw, ok := s.w.(interface{ WriteString(string) (int, error) }); ok {
		return sw.WriteString(str)
	}
	return s.w.Write([]byte(str))
}

// FlushError flushes the writer beneath, as http.ResponseController does.
func (s *statusWriter) FlushError() error {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return http.NewResponseController(s.w).Flush()
}

// Flush is FlushError for callers that look for http.Flusher.
func (s *statusWriter) Flush() { _ = s.FlushError() }

// Hijack hands over the connection of the writer beneath.
func (s *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(s.w).Hijack()
}

// Unwrap lets http.ResponseController reach the writer beneath.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.w }

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
