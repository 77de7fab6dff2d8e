package httplock

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
)

// errNoFingerprint is why ServeRecorded answers 500 on an engine with
// Replay when the adapter gave no fingerprint: every request of the key
// would match the record.
var errNoFingerprint = errors.New("reqlock: Replay through Engine.ServeRecorded needs the request's fingerprint")

// ServeRecorded is the engine's flow for an adapter whose answers are bytes
// rather than an HTTP response (a unary RPC): Serve, with Config.Replay.
//
// run runs the handler under the lock and returns the bytes that stand for
// its answer (the adapter's encoding of the response message), or an error
// when it failed: then nothing is recorded and a retry runs it again. With
// Replay set, the bytes run returned are recorded with the release (not
// when they are over ReplayConfig.MaxResponseBody, or run panicked), and a
// later call with the key and an equal fingerprint gets them back as record
// with replayed true, without run; an unequal fingerprint is
// ErrReplayMismatch. fingerprint is the adapter's digest of the request
// (such as a hash of the method and the request message): it must not be
// empty with Replay, or the answer is ErrInvalidConfig (500, logged). Only
// ReplayConfig's Retention and MaxResponseBody apply here.
//
// Without Replay it is Serve: run's bytes are dropped. Keys, waiting,
// fail-open, telemetry and the rejections are Serve's.
func (e *Engine) ServeRecorded(ctx context.Context, scope, key string, keyErr error, fingerprint []byte, run func(ctx context.Context) ([]byte, error)) (record []byte, replayed bool, rej *Rejection) {
	w := &recordedWriter{fingerprint: fingerprint}
	replayed, rej = e.serve(ctx, nil, w, scope, key, keyErr, func(ctx context.Context, hw http.ResponseWriter) error {
		out, err := run(ctx)
		if err != nil {
			return Failed(err) // no answer to replay, but an end
		}
		_, _ = hw.Write(out) // through the capture, when recording
		return nil
	})
	if replayed {
		return w.body, true, nil
	}
	return nil, false, rej
}

// recordedFingerprint is the fingerprint ServeRecorded was given, or the
// rejection for none.
func (e *Engine) recordedFingerprint(scope string, w *recordedWriter) ([]byte, *Rejection) {
	if len(w.fingerprint) == 0 {
		logged := e.loggedScope(scope)
		logBurst(e.cfg.Logger, slog.LevelError, "reqlock: Engine.ServeRecorded was given no fingerprint with Config.Replay; answering 500", logged, errNoFingerprint,
			logScope, logged, logOutcome, OutcomeMisconfigured)
		return nil, reject(ErrInvalidConfig, errNoFingerprint, 0)
	}
	return w.fingerprint, nil
}

// recordedWriter carries ServeRecorded's call through the engine's one
// flow: the fingerprint in, and the replayed record out (the engine writes
// a replay to its writer). What the handler's bytes go through on their way
// to the record is the engine's capture, as for HTTP.
type recordedWriter struct {
	fingerprint []byte
	header      http.Header
	body        []byte
}

func (w *recordedWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}

func (w *recordedWriter) WriteHeader(int) {}

// Write keeps b without copying it when it comes whole: the record's body,
// or run's bytes, both owned by this call.
func (w *recordedWriter) Write(b []byte) (int, error) {
	if w.body == nil {
		w.body = b
	} else {
		w.body = append(w.body[:len(w.body):len(w.body)], b...)
	}
	return len(b), nil
}

// Failed marks err, returned by the next func an adapter gives
// ServeResponse, as the handler's own failure, answered by the adapter or
// the framework outside the engine (a unary RPC's status error, an error
// Gin's c.AbortWithError left for an outer middleware): the run ended,
// nothing was cut short, so nothing is recorded and nothing is left in
// doubt, and a retry runs the handler. An error not marked is a response
// broken off: the run stays in doubt (ReplayConfig.InDoubt).
func Failed(err error) error { return runFailed{err} }

// runFailed is Failed's error.
type runFailed struct{ err error }

func (f runFailed) Error() string { return f.err.Error() }
func (f runFailed) Unwrap() error { return f.err }

// failedCleanly reports whether err, from a handler's run, is a run's own
// failure that the adapter answers (Failed).
func failedCleanly(err error) bool {
	var f runFailed
	return errors.As(err, &f)
}
