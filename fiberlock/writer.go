package fiberlock

import (
	"net/http"
	"slices"

	"github.com/reqlock/reqlock/httplock"
	"github.com/valyala/fasthttp"
)

// writer is the http.ResponseWriter the engine writes a rejection or a
// replay to, over fasthttp's response: net/http's semantics (a header map
// read and changed until the status goes out) on the response Fiber holds
// whole until the chain returns. It is made for every request and stays
// cheap until used: the map is built only when asked for.
type writer struct {
	resp *fasthttp.Response
	// header is the map Header returns; nil until asked for, then built
	// from the response's headers, as sent keeps them.
	header, sent http.Header
	wrote        bool
	// held means the status and body going through are already in resp
	// (the handler's, passed through the replay's recording writer): they
	// are only noted by the writer above.
	held bool
	// before are resp's headers before the handler ran (keepHeaders), for
	// undo.
	before *fasthttp.ResponseHeader
}

// keepHeaders notes resp's headers (outer middleware's) before the
// handler runs, so that undo can go back to them.
func (w *writer) keepHeaders() {
	w.before = new(fasthttp.ResponseHeader)
	w.resp.Header.CopyTo(w.before)
}

// undo takes the handler's response out of resp, which fasthttp holds
// until the chain returns, when the engine answers with a rejection after
// the handler ran (under pgstore.WithTx, a transaction that did not
// commit): its status, headers and body must not reach the client.
func (w *writer) undo() {
	if !w.held {
		return
	}
	w.held, w.wrote, w.header, w.sent = false, false, nil, nil
	w.resp.ResetBody()
	w.before.CopyTo(&w.resp.Header)
	w.resp.SetStatusCode(http.StatusOK)
}

// Status is the status of the response, for telemetry.
func (w *writer) Status() int { return w.resp.StatusCode() }

func (w *writer) Header() http.Header {
	if w.header == nil {
		w.header, w.sent = make(http.Header), make(http.Header)
		for k, v := range w.resp.Header.All() {
			name := http.CanonicalHeaderKey(string(k))
			w.header[name] = append(w.header[name], string(v))
			w.sent[name] = append(w.sent[name], string(v))
		}
	}
	return w.header
}

func (w *writer) WriteHeader(code int) {
	if w.wrote || w.held {
		return
	}
	w.wrote = true
	if w.header != nil { // what was changed in the map goes to the response
		h := &w.resp.Header
		for name := range w.sent {
			if _, ok := w.header[name]; !ok {
				h.Del(name)
			}
		}
		for name, vs := range w.header {
			if slices.Equal(vs, w.sent[name]) {
				continue
			}
			h.Del(name)
			for _, v := range vs {
				h.Add(name, v)
			}
		}
	}
	w.resp.SetStatusCode(code)
}

func (w *writer) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if !w.held {
		w.resp.AppendBody(b)
	}
	return len(b), nil
}

// Flush does nothing: fasthttp sends the response when the chain returns.
func (w *writer) Flush() {}

// pass hands the handler's response, which fasthttp holds, to the replay's
// recording writer hw: its status, its headers as they stand (read again,
// now) and its body; a streamed body is not recorded (httplock.Streamed).
func (w *writer) pass(hw http.ResponseWriter) {
	w.header, w.sent, w.held = nil, nil, true
	hw.WriteHeader(w.resp.StatusCode())
	if w.resp.IsBodyStream() {
		httplock.Streamed(hw) // its bytes never pass hw
		return
	}
	_, _ = hw.Write(w.resp.Body())
}
