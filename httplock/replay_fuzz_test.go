package httplock

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// Whatever the store hands back, decoding never panics, and what decodes
// encodes back to a record that decodes the same.
func FuzzDecodeResponse(f *testing.F) {
	f.Add((&response{status: 201, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{}`), fingerprint: []byte("fp")}).encode())
	f.Add([]byte{recordMagic, recordVersion, 0, 200, 0, 0})
	f.Add([]byte{recordMagic, recordVersion, 0, 200, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte("v{}")) // an outcome of core.Locker.Once
	f.Add((&response{status: 200, removed: []string{"Cache-Control"}, fingerprint: []byte("fp")}).encode())
	f.Add([]byte{recordMagic, recordVersionRemoved, 0, 200, 0, 0, 0}) // version 2 with no name removed
	f.Fuzz(func(t *testing.T, rec []byte) {
		r, err := decodeResponse(rec)
		if err != nil {
			return
		}
		again, err := decodeResponse(r.encode())
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if again.status != r.status || !bytes.Equal(again.body, r.body) || !bytes.Equal(again.fingerprint, r.fingerprint) || !sameHeader(&again, &r) {
			t.Fatalf("round trip changed the record:\n%+v\n%+v", r, again)
		}
	})
}

// Every response survives the record.
func FuzzResponseRoundTrip(f *testing.F) {
	f.Add(201, "Location", "/orders/1", []byte(`{"id":1}`), []byte("fp"))
	f.Add(999, "", "", []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, status int, name, value string, body, fp []byte) {
		status = 100 + (status%900+900)%900
		in := &response{status: status, header: http.Header{name: {value, value + "2"}}, body: body, fingerprint: fp}
		if len(value)%2 == 0 {
			in.removed = []string{value + "-gone"}
		}
		out, err := decodeResponse(in.encode())
		if err != nil {
			t.Fatal(err)
		}
		if out.status != in.status || !bytes.Equal(out.body, body) || !bytes.Equal(out.fingerprint, fp) || !sameHeader(&out, in) {
			t.Fatalf("round trip changed the record:\n%+v\n%+v", in, out)
		}
	})
}

// A record replays for a request exactly when method, path, query and body
// are those it was recorded for; any other request gets ErrReplayMismatch.
func FuzzReplayOnlyForItsFingerprint(f *testing.F) {
	f.Add("POST", "/orders/1", "", []byte("a"), "POST", "/orders/1", "", []byte("a"))
	f.Add("POST", "/orders/1", "", []byte("a"), "POST", "/orders/2", "", []byte("a"))
	f.Add("POST", "/a", "b", []byte(""), "POST", "/ab", "", []byte(""))
	f.Add("PUT", "/x", "q=1", []byte("ab"), "PUT", "/x", "q=1", []byte("a"))
	e, err := NewEngine(Config{Locker: core.NewLocker(memorystore.New()), Replay: &ReplayConfig{}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, m1, p1, q1 string, b1 []byte, m2, p2, q2 string, b2 []byte) {
		r1 := &http.Request{Method: m1, URL: &url.URL{Path: p1, RawQuery: q1}}
		r2 := &http.Request{Method: m2, URL: &url.URL{Path: p2, RawQuery: q2}}
		rec := (&response{status: 201, body: []byte("first"), fingerprint: e.replay.fingerprint(r1, b1)}).encode()
		same := m1 == m2 && r1.URL.EscapedPath() == r2.URL.EscapedPath() && q1 == q2 && bytes.Equal(b1, b2)
		w := httptest.NewRecorder()
		replayed, rej := e.replayRecord(w, r2, "fuzz", rec, e.replay.fingerprint(r2, b2))
		switch {
		case same && (!replayed || w.Body.String() != "first"):
			t.Fatalf("same request not replayed: %v", rej)
		case !same && (replayed || rej == nil || rej.Reason != ErrReplayMismatch):
			t.Fatalf("another request got %v, %v, %q", replayed, rej, w.Body)
		}
	})
}

func sameHeader(a, b *response) bool {
	ha, hb := headerOf(a), headerOf(b)
	return len(ha) == len(hb) && (len(ha) == 0 || reflect.DeepEqual(ha, hb)) && slices.Equal(removedOf(a), removedOf(b))
}

// removedOf is r's names removed.
func removedOf(r *response) []string {
	var names []string
	r.eachRemoved(func(name []byte) { names = append(names, string(name)) })
	return names
}

// headerOf is r's header lines as a header.
func headerOf(r *response) http.Header {
	h := http.Header{}
	r.eachHeader(func(name, v []byte) { h[string(name)] = append(h[string(name)], string(v)) })
	return h
}
