package echolock

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
)

// sentStatus is the status Echo sent or, while nothing is sent and the
// handler returned err, the one Echo's default error handler answers err
// with: Echo renders a handler's error only after the middleware returns,
// too late for the middleware's metrics to see it. 0: unknown.
func sentStatus(committed bool, status int, err error) int {
	switch {
	case committed:
		return status
	case err == nil:
		return 0
	}
	if he, ok := errors.AsType[*echo.HTTPError](err); ok {
		return he.Code
	}
	return http.StatusInternalServerError
}
