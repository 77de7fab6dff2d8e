package httplock

import (
	"bufio"
	"net"
	"net/http"
	"slices"
)

// capture is the http.ResponseWriter a handler writes through when replay
// is on: everything goes on to the writer beneath at once, as without it,
// and a copy of the status, the allowed headers the handler set and up to
// maxBody of the body is kept for the record. A response that was flushed (streamed) or
// hijacked, or whose body outgrew the bound, is marked: it is not recorded.
//
// It is the one capture for every adapter: net/http and Echo put it
// beneath their own writer, Gin behind a gin.ResponseWriter that sends the
// body through it.
type capture struct {
	w       http.ResponseWriter
	allow   []string
	maxBody int

	// outer holds the allowed headers already on the shared header map
	// when the capture was made: middleware outside the lock put them
	// there, and will again around a replay, for the bytes it sees.
	// A compression middleware's Content-Encoding: gzip labels the body
	// it compresses, not the plain body recorded here, so such a header
	// is recorded only if the handler changed it.
	outer http.Header
	// removed are the allowed names in outer that the handler removed.
	removed []string

	// lazy is the writer beneath when it holds the status back until the
	// body starts (Gin's): with it the last WriteHeader before the body
	// wins, not the first, so the status is asked of it then.
	lazy lazyStatus

	status   int // 0 until the header went out
	header   http.Header
	body     []byte
	over     bool // the body outgrew maxBody
	streamed bool // Flush was called
	hijacked bool

	// held: the response is held back until send, because the handler
	// runs in the store's transaction and its answer must not go out
	// before that commits (hold). Its headers are set on a map of its
	// own, sent is that map as the status went out, and nothing reaches
	// the writer beneath until send.
	held bool
	own  http.Header
	sent http.Header
}

// hold makes c hold the response back until send. The handler starts from
// the headers already on the writer (an outer middleware's).
func (c *capture) hold() {
	c.held = true
	c.own = c.w.Header().Clone()
	if c.own == nil {
		c.own = make(http.Header)
	}
}

// send writes the held response to the writer beneath: what the client
// would have got at once without hold.
func (c *capture) send() {
	c.settle()
	h := c.w.Header()
	clear(h)
	for name, vs := range c.sent {
		h[name] = vs
	}
	c.w.WriteHeader(c.status)
	if len(c.body) > 0 {
		_, _ = c.w.Write(c.body)
	} else if c.lazy != nil {
		c.lazy.WriteHeaderNow()
	}
}

// sendable reports whether the held response can go out as it is though it
// is not recorded: its status is one RecordStatus refuses (a failure the
// handler answered), and its body is whole.
func (c *capture) sendable(o *replayOpts) bool {
	c.settle()
	return !c.over && !c.hijacked && !o.recordStatus(c.status)
}

func newCapture(w http.ResponseWriter, o *replayOpts) *capture {
	c := &capture{w: w, allow: o.headers, maxBody: o.maxResponse}
	c.lazy, _ = w.(lazyStatus)
	h := w.Header()
	for _, name := range c.allow {
		if vs, ok := h[name]; ok {
			if c.outer == nil {
				c.outer = make(http.Header)
			}
			c.outer[name] = append([]string(nil), vs...)
		}
	}
	return c
}

// lazyStatus is a writer that sends the status only with the body or when
// told to (gin.ResponseWriter).
type lazyStatus interface {
	Status() int
	WriteHeaderNow()
}

// start notes the status and the allowed headers the handler set as they
// go out.
func (c *capture) start(status int) {
	if c.status != 0 {
		return
	}
	if c.lazy != nil && c.lazy.Status() != 0 {
		status = c.lazy.Status()
	}
	c.status = status
	c.header = make(http.Header, len(c.allow))
	h := c.Header()
	if c.held {
		c.sent = h.Clone()
	}
	for _, name := range c.allow {
		vs, ok := h[name]
		switch {
		case len(vs) == 0 && len(c.outer[name]) > 0:
			c.removed = append(c.removed, name)
		case ok && !slices.Equal(vs, c.outer[name]):
			c.header[name] = append([]string(nil), vs...)
		}
	}
}

// WriteHeaderNow sends the status a lazy writer beneath holds back (Gin's
// c.AbortWithStatus does so before the handler returns), noting the
// headers now: one set after the status went out never reached the client
// and must not reach the record.
func (c *capture) WriteHeaderNow() {
	if c.lazy == nil {
		return // nothing is held back: WriteHeader sent the status
	}
	c.start(http.StatusOK)
	if !c.held {
		c.lazy.WriteHeaderNow()
	}
}

// settle is start for a handler that returned without writing: net/http
// then sends 200 and the headers set by then (Gin its pending status).
func (c *capture) settle() { c.start(http.StatusOK) }

func (c *capture) Header() http.Header {
	if c.held {
		return c.own
	}
	return c.w.Header()
}

func (c *capture) WriteHeader(code int) {
	// The headers are noted before the writer beneath sees the status: an
	// outer writer may add its own as the status goes out (a compression
	// middleware its Content-Encoding), and those label its bytes, not the
	// handler's. 1xx other than 101 are interim: the final status is still
	// to come.
	if c.lazy == nil && (code >= 200 || code == http.StatusSwitchingProtocols) {
		c.start(code)
	}
	if c.held {
		// Held: a lazy writer's status is asked for at the body; an
		// interim status (103 Early Hints) is dropped, being about a
		// moment that has passed by the commit.
		if c.lazy != nil && code >= 200 {
			c.w.WriteHeader(code)
		}
		return
	}
	c.w.WriteHeader(code)
}

// Write keeps the handler's bytes even if the client is gone: the record is
// the handler's answer, which is what a client that retries must get.
func (c *capture) Write(b []byte) (int, error) {
	c.start(http.StatusOK)
	c.keep(b)
	if c.held {
		return len(b), nil
	}
	return c.w.Write(b)
}

func (c *capture) WriteString(s string) (int, error) {
	c.start(http.StatusOK)
	c.keep([]byte(s))
	if c.held {
		return len(s), nil
	}
	if sw, ok := c.w.(interface{ WriteString(string) (int, error) }); ok {
		return sw.WriteString(s)
	}
	return c.w.Write([]byte(s))
}

func (c *capture) keep(b []byte) {
	if c.over {
		return
	}
	if len(c.body)+len(b) > c.maxBody {
		c.over, c.body = true, nil
		return
	}
	c.body = append(c.body, b...)
}

// FlushError marks the response streamed: its client may have acted on a
// part of it, and a replay could not stream it the same way.
// Held, it sends nothing: nothing goes out before the commit.
func (c *capture) FlushError() error {
	c.start(http.StatusOK)
	if c.held {
		return nil
	}
	c.streamed = true
	return http.NewResponseController(c.w).Flush()
}

// Streamed tells the engine, through the writer an adapter's next func was
// given, that the response's body goes out another way than through it (a
// body stream the framework sends after the chain, as fasthttp's): the
// response is not recorded, as a flushed one is not. Under the store's
// transaction (pgstore.WithTx) such a response cannot commit with its
// record: it is answered 500 not_committed and the handler's writes are
// rolled back. On another writer it does nothing.
func Streamed(w http.ResponseWriter) {
	if c, ok := w.(*capture); ok {
		c.streamed = true
	}
}

// Flush is FlushError for callers that look for http.Flusher.
func (c *capture) Flush() { _ = c.FlushError() }

// Hijack marks the response hijacked: whatever is sent on the connection
// from now on bypasses the capture.
func (c *capture) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c.hijacked = true
	return http.NewResponseController(c.w).Hijack()
}

// Unwrap lets http.ResponseController reach the writer beneath for what
// the capture does not handle itself (deadlines, full duplex).
func (c *capture) Unwrap() http.ResponseWriter { return c.w }

// response returns the record to write, or nil when the response must not
// be recorded.
func (c *capture) response(o *replayOpts, fingerprint []byte) *response {
	c.settle()
	if c.over || c.streamed || c.hijacked || !o.recordStatus(c.status) {
		return nil
	}
	return &response{status: c.status, header: c.header, removed: c.removed, body: c.body, fingerprint: fingerprint}
}
