package ginlock

import (
	"bufio"
	"io"
	"net"
	"net/http"

	"github.com/gin-gonic/gin"
)

// recordingWriter is the gin.ResponseWriter the chain sees while replay
// records its response: whatever sends the status or the body (Write,
// WriteHeaderNow, Flush) and hijacks go through the engine's recording
// writer, which passes them on to Gin's own, and so does Header; the rest
// (the status Gin holds until then, Size, Written) is Gin's.
type recordingWriter struct {
	gin.ResponseWriter
	rec    http.ResponseWriter
	broken *bool // a write to the client failed: the response broke off
}

// Header is the recording writer's: it holds the handler's headers back
// with its response when the handler runs in the store's transaction
// (pgstore.WithTx), and is Gin's own map otherwise.
func (w recordingWriter) Header() http.Header { return w.rec.Header() }

func (w recordingWriter) Write(b []byte) (int, error) { return w.noted(w.rec.Write(b)) }

func (w recordingWriter) WriteString(s string) (int, error) {
	return w.noted(io.WriteString(w.rec, s))
}

func (w recordingWriter) noted(n int, err error) (int, error) {
	if err != nil {
		*w.broken = true
	}
	return n, err
}

// WriteHeaderNow goes through the recording writer so that it notes the
// headers as the status goes out (c.AbortWithStatus, c.Status then
// WriteHeaderNow): a header set afterwards never reaches the client.
func (w recordingWriter) WriteHeaderNow() {
	w.rec.(interface{ WriteHeaderNow() }).WriteHeaderNow()
}

func (w recordingWriter) Flush() { _ = http.NewResponseController(w.rec).Flush() }

func (w recordingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.rec).Hijack()
}

// Unwrap is for http.ResponseController: the recording writer, so that a
// flush or hijack through a controller is seen too.
func (w recordingWriter) Unwrap() http.ResponseWriter { return w.rec }
