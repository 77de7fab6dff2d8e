package echo5lock

import (
	"errors"

	"github.com/labstack/echo/v5"

	"github.com/reqlock/reqlock/httplock"
)

// DefaultErrorHandler returns the rejection as an *echo.HTTPError, so the
// app's own HTTPErrorHandler renders it: Code is the status and Message the
// problem's detail. It wraps the *httplock.Rejection (errors.As reaches it)
// as an echo.ProblemErrorer, so echo.ProblemDetailsHTTPErrorHandler renders
// the RFC 9457 body. Retry-After is set on the response here, since it
// belongs to the answer whatever renders the body.
func DefaultErrorHandler(c *echo.Context, err error) error {
	var rej *httplock.Rejection
	if !errors.As(err, &rej) {
		return err
	}
	rej.SetHeaders(c.Response().Header())
	return echo.HTTPError{Code: rej.Status, Message: rej.Problem.Detail}.Wrap(problem{rej})
}

// problem is a Rejection as Echo's RFC 9457 error handler reads it.
type problem struct{ *httplock.Rejection }

func (p problem) Unwrap() error { return p.Rejection }

// ProblemError implements echo.ProblemErrorer. Echo's problem has no
// extension members: RenderProblem also writes reqlock's "code".
func (p problem) ProblemError() *echo.ProblemError {
	return &echo.ProblemError{Type: p.Problem.Type, Title: p.Problem.Title, Status: p.Problem.Status, Detail: p.Problem.Detail}
}

// WriteProblem is an ErrorHandler that answers the rejection itself with
// httplock.WriteProblem (application/problem+json) instead of handing an
// error to the app's HTTPErrorHandler. It returns nil.
func WriteProblem(c *echo.Context, err error) error {
	var rej *httplock.Rejection
	if !errors.As(err, &rej) {
		return err
	}
	httplock.WriteProblem(c.Response(), c.Request(), rej)
	return nil
}

// RenderProblem renders an error whose chain holds a *httplock.Rejection
// (what DefaultErrorHandler returns) as application/problem+json, with
// reqlock's stable "code" member, and reports true; for any other error it
// does nothing and reports false. Call it first in your HTTPErrorHandler:
//
//	e.HTTPErrorHandler = func(c *echo.Context, err error) {
//		if echo5lock.RenderProblem(c, err) {
//			return
//		}
//		echo.DefaultHTTPErrorHandler(false)(c, err)
//	}
func RenderProblem(c *echo.Context, err error) bool {
	var rej *httplock.Rejection
	if !errors.As(err, &rej) {
		return false
	}
	if r, _ := echo.UnwrapResponse(c.Response()); r == nil || !r.Committed {
		httplock.WriteProblem(c.Response(), c.Request(), rej)
	}
	return true
}
