package httplock

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/memorystore"
)

// recordBytes lays a record out by hand, byte for byte as the format
// comment describes it and as every earlier version wrote it: lines are
// name, value pairs in the order given.
func recordBytes(status uint16, fp string, lines [][2]string, body string) []byte {
	field := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b := []byte{recordMagic, recordVersion, byte(status >> 8), byte(status)}
	b = field(b, fp)
	b = binary.AppendUvarint(b, uint64(len(lines)))
	for _, l := range lines {
		b = field(field(b, l[0]), l[1])
	}
	return append(b, body...)
}

func replayEngine(t *testing.T, headers []string) *Engine {
	t.Helper()
	e, err := NewEngine(Config{Locker: core.NewLocker(memorystore.New()), Replay: &ReplayConfig{Headers: headers}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A record laid out as earlier versions wrote it replays as it was sent:
// status and body, every allowed header with its values in order (also
// when the lines of one name are not next to each other), nothing the
// allow-list leaves out, and no value an outer middleware put under a
// recorded name beside the recorded ones; what the outer middleware set
// under other names stays.
func TestReplayOfHandWrittenRecord(t *testing.T) {
	rec := recordBytes(201, "fp", [][2]string{
		{"Link", "</a>; rel=next"},
		{"Content-Type", "application/json"},
		{"Set-Cookie", "session=secret"},
		{"Link", "</b>; rel=prev"},
		{"Cache-Control", ""},
		{"Link", "</c>; rel=last"},
	}, `{"id":7}`)
	e := replayEngine(t, nil)
	w := httptest.NewRecorder()
	w.Header().Set("Link", "</outer>")
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Request-Id", "r-1")
	w.Header().Set("ETag", `"outer"`)
	replayed, rej := e.replayRecord(w, httptest.NewRequest(http.MethodPost, "/orders", nil), "s", rec, []byte("fp"))
	if !replayed || rej != nil {
		t.Fatalf("not replayed: %v", rej)
	}
	res := w.Result()
	if res.StatusCode != 201 || w.Body.String() != `{"id":7}` {
		t.Errorf("replayed %d %q", res.StatusCode, w.Body)
	}
	want := http.Header{
		"Link":                   {"</a>; rel=next", "</b>; rel=prev", "</c>; rel=last"},
		"Content-Type":           {"application/json"},
		"Cache-Control":          {""},
		"X-Request-Id":           {"r-1"},
		"Etag":                   {`"outer"`},
		HeaderIdempotentReplayed: {"true"},
		"Content-Length":         {"8"},
	}
	if !reflect.DeepEqual(res.Header, want) {
		t.Errorf("replayed header\n%v\nwant\n%v", res.Header, want)
	}
}

// A header taken off the allow-list since the record was written is not
// replayed, and leaves what the writer had under its name alone.
func TestReplayOfRecordWithHeaderNoLongerAllowed(t *testing.T) {
	rec := recordBytes(200, "fp", [][2]string{{"X-Old", "1"}, {"X-Kept", "2"}}, "ok")
	e := replayEngine(t, []string{"x-kept"})
	w := httptest.NewRecorder()
	w.Header().Set("X-Old", "outer")
	if replayed, rej := e.replayRecord(w, httptest.NewRequest(http.MethodPost, "/", nil), "s", rec, []byte("fp")); !replayed {
		t.Fatalf("not replayed: %v", rej)
	}
	h := w.Result().Header
	if v := h.Values("X-Old"); len(v) != 1 || v[0] != "outer" {
		t.Errorf("X-Old %q, want the writer's own", v)
	}
	if v := h.Values("X-Kept"); len(v) != 1 || v[0] != "2" {
		t.Errorf("X-Kept %q, want 2", v)
	}
}

// What the capture records decodes to the same lines, and a decoded record
// encodes back to the same bytes.
func TestRecordLinesRoundTrip(t *testing.T) {
	in := &response{status: 201, fingerprint: []byte("fp"), body: []byte("body"),
		header: http.Header{"Link": {"</a>", "</b>", "</c>"}}}
	rec := in.encode()
	out, err := decodeResponse(rec)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	out.eachHeader(func(name, v []byte) { got = append(got, [2]string{string(name), string(v)}) })
	want := [][2]string{{"Link", "</a>"}, {"Link", "</b>"}, {"Link", "</c>"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	if again := out.encode(); !bytes.Equal(again, rec) {
		t.Errorf("re-encoded\n%x\nwant\n%x", again, rec)
	}
}

// Damaged or hostile record bytes are an error, never a panic, and reading
// them allocates nothing, whatever counts and lengths they claim.
func TestDecodeHostileRecords(t *testing.T) {
	good := recordBytes(200, "fp", [][2]string{{"Link", "</a>"}}, "ok")
	huge := binary.AppendUvarint(nil, 1<<63)
	cases := map[string][]byte{
		"empty":             {},
		"short":             {recordMagic, recordVersion, 0},
		"newer version":     {recordMagic, recordVersion + 1, 0, 200, 0, 0},
		"status 99":         recordBytes(99, "", nil, ""),
		"status 1000":       recordBytes(1000, "", nil, ""),
		"fingerprint huge":  append([]byte{recordMagic, recordVersion, 0, 200}, huge...),
		"line count huge":   append(append([]byte{recordMagic, recordVersion, 0, 200, 0}, huge...), 0, 0, 0, 0),
		"name length huge":  append(append([]byte{recordMagic, recordVersion, 0, 200, 0, 1}, huge...), 'x'),
		"value length huge": append(append([]byte{recordMagic, recordVersion, 0, 200, 0, 1, 1, 'X'}, huge...), 'x'),
		"varint overflow":   {recordMagic, recordVersion, 0, 200, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"line cut short":    good[:len(good)-len("ok")-2],
		"one line missing":  {recordMagic, recordVersion, 0, 200, 2, 'f', 'p', 2, 4, 'L', 'i', 'n', 'k', 1, 'a'},
	}
	for name, rec := range cases {
		var err error
		allocs := testing.AllocsPerRun(10, func() { _, err = decodeResponse(rec) })
		if err == nil {
			t.Errorf("%s: decoded", name)
		}
		if allocs != 0 {
			t.Errorf("%s: %v allocations", name, allocs)
		}
	}
	// Many empty lines are read where they lie, with no allocation per line.
	many := recordBytes(200, "fp", make([][2]string, 100000), "")
	var r response
	var err error
	if allocs := testing.AllocsPerRun(5, func() { r, err = decodeResponse(many) }); err != nil || allocs != 0 || r.count != 100000 {
		t.Errorf("100000 empty lines: %v, %v allocations, count %d", err, allocs, r.count)
	}
}
