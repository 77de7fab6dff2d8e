package httplock

import (
	"bytes"
	"io"
	"net/http"
)

// readBodyAhead reads up to WaitBodyLimit of r's body into memory and puts
// it back, beside the wait, so that a slow upload does not use up MaxWait.
// It returns a func that waits until the read is done (r's body is not the
// handler's before then). The read ends when the body ends, fails, or the
// client goes. A body known to be longer is left alone.
func (e *Engine) readBodyAhead(r *http.Request) (done func()) {
	limit := e.cfg.WaitBodyLimit
	if r == nil || r.Body == nil || r.Body == http.NoBody || limit < 0 || r.ContentLength > limit {
		return func() {}
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		e.readBodyNow(r, limit)
	}()
	return func() { <-ch }
}

// readBodyNow reads up to limit of r's body into memory and puts it back.
func (e *Engine) readBodyNow(r *http.Request, limit int64) {
	orig := r.Body
	buf, err := io.ReadAll(io.LimitReader(orig, limit+1))
	var rest io.Reader = orig // at its end, or the part past the limit
	if err != nil {
		rest = errReader{err}
	}
	r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), rest), orig}
}

type readCloser struct {
	io.Reader
	io.Closer
}

// errReader gives the handler the error that reading ahead met.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
