package httplock

import (
	"bytes"
	"io"
	"net/http"
)

// readBody reads up to WaitBodyLimit bytes of r's body into memory before r
// waits, and gives r a body that yields the same bytes, errors included.
//
// net/http watches a connection for a client that leaves only once the
// request's body has been read to its end; until then a waiting request
// whose client left would still get its lock and run. A body that is
// longer is left as it is (the bytes read so far are given back first).
func (e *Engine) readBody(r *http.Request) {
	limit := e.cfg.WaitBodyLimit
	if r == nil || r.Body == nil || r.Body == http.NoBody || limit < 0 || r.ContentLength > limit {
		return
	}
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
