package echo5lock

import (
	"errors"

	"github.com/labstack/echo/v5"

	"github.com/reqlock/reqlock/httplock"
)

// DefaultErrorHandler returns the rejection as an *echo.HTTPError (Code:
// the status; it wraps the *httplock.Rejection, which errors.As reaches),
// so that Echo's logger and outer middleware see the request failed. The
// answer, with reqlock's "code", is already written: Echo's error handlers
// (echo.DefaultHTTPErrorHandler, echo.ProblemDetailsHTTPErrorHandler) leave
// a committed response alone.
func DefaultErrorHandler(_ *echo.Context, err error) error {
	var rej *httplock.Rejection
	if !errors.As(err, &rej) {
		return err
	}
	return echo.HTTPError{Code: rej.Status, Message: rej.Problem.Detail}.Wrap(rej)
}
