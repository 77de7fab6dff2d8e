package echolock

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/reqlock/reqlock/httplock"
)

// DefaultErrorHandler returns the rejection as an *echo.HTTPError (Code:
// the status; Internal: the *httplock.Rejection, which errors.As reaches),
// so that Echo's logger and outer middleware see the request failed. The
// answer is already written: Echo's error handler leaves a committed
// response alone.
func DefaultErrorHandler(_ echo.Context, err error) error {
	var rej *httplock.Rejection
	if !errors.As(err, &rej) {
		return err
	}
	return &echo.HTTPError{Code: rej.Status, Message: rej.Problem.Detail, Internal: rej}
}
