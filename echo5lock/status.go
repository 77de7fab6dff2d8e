package echo5lock

import (
	"net/http"

	"github.com/labstack/echo/v5"
)

// statusResponse is the writer the middleware hands the engine while
// Config.Telemetry is on, so that the metrics can report the status Echo
// sent. It reports none (0) while nothing is sent: a handler's error is
// rendered after the middleware returns.
type statusResponse struct {
	http.ResponseWriter
	res *echo.Response
}

// Status is the status sent, or 0.
func (s statusResponse) Status() int {
	if !s.res.Committed {
		return 0
	}
	return s.res.Status
}

// Unwrap lets http.ResponseController and echo reach the writer beneath.
func (s statusResponse) Unwrap() http.ResponseWriter { return s.ResponseWriter }
