package httplock

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/reqlock/reqlock/core"
)

// errNoWriter is why an engine with Replay answers 500 through Serve or
// ServeRequest: a replay needs the writer that ServeResponse is given.
var errNoWriter = errors.New("reqlock: Replay needs Engine.ServeResponse")

// readBody reads r's whole body, up to limit, for the fingerprint, and puts
// it back for the handler. It runs before the lock is taken, so that a slow
// upload holds no lock.
func (e *Engine) readBody(ctx context.Context, r *http.Request, limit int64) ([]byte, *Rejection) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	orig := r.Body
	body, err := io.ReadAll(io.LimitReader(orig, limit+1))
	var tooLarge *http.MaxBytesError
	switch {
	case err != nil && clientGone(ctx):
		return nil, reject(ErrClientGone, err, 0)
	case errors.As(err, &tooLarge):
		return nil, reject(ErrBodyTooLarge, err, 0)
	case err != nil:
		return nil, reject(ErrBodyUnreadable, err, 0)
	case int64(len(body)) > limit:
		return nil, reject(ErrBodyTooLarge, nil, 0)
	}
	r.Body = readCloser{bytes.NewReader(body), orig}
	return body, nil
}

// replayRecord answers a request whose key has a record: the recorded
// response when the fingerprints match, else a rejection.
func (e *Engine) replayRecord(w http.ResponseWriter, r *http.Request, scope string, record, fingerprint []byte) (bool, *Rejection) {
	resp, err := decodeResponse(record)
	if err != nil {
		logBurst(e.cfg.Logger, slog.LevelError, "reqlock: a key's record cannot be read; answering 500", e.cfg.Locker, err,
			logScope, e.loggedScope(scope), logOutcome, OutcomeRecordUnreadable)
		return false, reject(ErrRecordUnreadable, err, 0)
	}
	if subtle.ConstantTimeCompare(resp.fingerprint, fingerprint) != 1 {
		return false, reject(ErrReplayMismatch, nil, 0)
	}
	h := w.Header()
	// Only what is allowed now: a header taken off the list since the
	// record was written is not replayed. A recorded header replaces what
	// the writer had under its name, and one the handler removed is
	// removed again.
	drop := func(name []byte) {
		if name, ok := e.replay.allowed[string(name)]; ok {
			delete(h, name)
		}
	}
	resp.eachHeader(func(name, _ []byte) { drop(name) })
	resp.eachRemoved(drop)
	resp.eachHeader(func(name, v []byte) {
		if name, ok := e.replay.allowed[string(name)]; ok {
			h[name] = append(h[name], string(v))
		}
	})
	h.Set(HeaderIdempotentReplayed, "true")
	body := bodyAllowed(resp.status)
	if body {
		h.Set("Content-Length", strconv.Itoa(len(resp.body)))
	}
	w.WriteHeader(resp.status)
	if body && (r == nil || r.Method != http.MethodHead) { // r: nil through ServeRecorded
		_, _ = w.Write(resp.body)
	}
	return true, nil
}

// bodyAllowed reports whether a response with status may have a body (RFC
// 9110: not 1xx, 204 or 304).
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// releaseRecording writes resp as the key's record and releases the lock in
// one round trip, or, when resp is nil (not to be recorded), only releases.
// The store writes the record only while the lock's token still holds it:
// a holder that lost its lock, or paused past its lease while another took
// the key, records nothing, and its response stays its client's alone.
func (e *Engine) releaseRecording(ctx context.Context, lk *core.Lock, scope string, resp *response) {
	if resp == nil {
		e.release(ctx, lk, scope)
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.StoreTimeout)
	defer cancel()
	err := lk.ReleaseRecording(rctx, resp.encode(), e.replay.retention)
	if err != nil && !errors.Is(err, core.ErrNotHeld) {
		logBurst(e.cfg.Logger, slog.LevelWarn, "reqlock: release failed; retrying it, with its record, in the background until the lease ends", e.cfg.Locker, err,
			logScope, e.loggedScope(scope), logReason, reasonReleaseFailed)
	}
}
