package echolock

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/reqlock/reqlock/httplock"
)

// DefaultErrorHandler returns the rejection as an *echo.HTTPError, so the
// app's own HTTPErrorHandler renders it: Code is the status, Message the
// httplock.Problem (Echo's default handler renders it as JSON) and Internal
// the *httplock.Rejection (errors.As reaches it). Retry-After is set on the
// response here, since it belongs to the answer whatever renders the body.
func DefaultErrorHandler(c echo.Context, err error) error {
	var rej *httplock.Rejection
	if !errors.As(err, &rej) {
		return err
	}
	rej.SetHeaders(c.Response().Header())
	return &echo.HTTPError{Code: rej.Status, Message: rej.Problem, Internal: rej}
}

// WriteProblem is an ErrorHandler that answers the rejection itself with
// httplock.WriteProblem (application/problem+json) instead of handing an
// error to the app's HTTPErrorHandler. It returns nil.
func WriteProblem(c echo.Context, err error) error {
	var rej *httplock.Rejection
	if !errors.As(err, &rej) {
		return err
	}
	httplock.WriteProblem(c.Response(), c.Request(), rej)
	return nil
}

// RenderProblem renders an error whose chain holds a *httplock.Rejection
// (what DefaultErrorHandler returns) as application/problem+json and reports
// true; for any other error it does nothing and reports false. Call it first
// in your HTTPErrorHandler:
//
//	e.HTTPErrorHandler = func(err error, c echo.Context) {
//		if echolock.RenderProblem(c, err) {
//			return
//		}
//		e.DefaultHTTPErrorHandler(err, c)
//	}
func RenderProblem(c echo.Context, err error) bool {
	var rej *httplock.Rejection
	if !errors.As(err, &rej) {
		return false
	}
	if !c.Response().Committed {
		httplock.WriteProblem(c.Response(), c.Request(), rej)
	}
	return true
}
