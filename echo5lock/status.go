package echo5lock

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v5"
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
	var sc echo.HTTPStatusCoder
	if errors.As(err, &sc) {
		return sc.StatusCode()
	}
	return http.StatusInternalServerError
}
