package httplock

import (
	"encoding/binary"
	"errors"
	"net/http"
)

// A recorded response, as the store keeps it:
//
//	'H' 1                  magic and format version
//	uint16                 status, big-endian
//	uvarint n, n bytes     the request fingerprint
//	uvarint k              header lines, then k times:
//	  uvarint n, n bytes   canonical name
//	  uvarint n, n bytes   one value
//	version 2 only:
//	uvarint k              names removed, then k times:
//	  uvarint n, n bytes   canonical name
//	the rest               the body
//
// A name removed is an allowed header that an outer middleware had set and
// the handler took away: the client did not get it, so the replay takes it
// off what the outer middleware sets again around the retry. A record with
// none is written as version 1, which every version reads.
//
// The version byte lets a later format be told apart during a rolling
// deploy: an instance that cannot read a record answers 500 rather than
// replaying something it misreads.
const (
	recordMagic   = 'H'
	recordVersion = 1
	// recordVersionRemoved is the format of a record with names removed.
	recordVersionRemoved = 2
)

// errRecordFormat is a record this version cannot read: damaged, from a
// newer version, or not a response at all (core.Locker.Once's outcome on a
// key an application shares with a route).
var errRecordFormat = errors.New("reqlock: the key's record is not a response this version can read")

// response is a recorded response. A captured one has header; a decoded
// one has its header lines as they are in the record (lines, count of them),
// read one by one by eachHeader without a map of their own.
type response struct {
	status      int
	header      http.Header
	body        []byte
	fingerprint []byte
	lines       []byte
	count       uint64
	// removed are the names removed (see the layout above): a captured
	// response's, or a decoded one's as laid out in the record.
	removed      []string
	removedLines []byte
	removedCount uint64
}

// eachRemoved calls fn with each name removed of r.
func (r *response) eachRemoved(fn func(name []byte)) {
	for _, name := range r.removed {
		fn([]byte(name))
	}
	d := decoder{b: r.removedLines}
	for range r.removedCount {
		fn(d.bytes()) // checked whole by decodeResponse
	}
}

// eachHeader calls fn with each header line of r, in the record's order for
// a decoded response. name and value alias the record.
func (r *response) eachHeader(fn func(name, value []byte)) {
	for name, vs := range r.header {
		for _, v := range vs {
			fn([]byte(name), []byte(v))
		}
	}
	d := decoder{b: r.lines}
	for range r.count {
		name := d.bytes() // checked whole by decodeResponse
		fn(name, d.bytes())
	}
}

func (r *response) encode() []byte {
	n := 4 + binary.MaxVarintLen64 + len(r.fingerprint) + 2*binary.MaxVarintLen64 + len(r.lines) + len(r.removedLines) + len(r.body)
	for _, name := range r.removed {
		n += binary.MaxVarintLen64 + len(name)
	}
	for name, vs := range r.header {
		for _, v := range vs {
			n += 2*binary.MaxVarintLen64 + len(name) + len(v)
		}
	}
	b := make([]byte, 0, n)
	removed := r.removedCount + uint64(len(r.removed))
	version := byte(recordVersion)
	if removed > 0 {
		version = recordVersionRemoved
	}
	b = append(b, recordMagic, version)
	b = binary.BigEndian.AppendUint16(b, uint16(r.status))
	b = appendBytes(b, r.fingerprint)
	lines := r.count
	for _, vs := range r.header {
		lines += uint64(len(vs))
	}
	b = binary.AppendUvarint(b, lines)
	r.eachHeader(func(name, v []byte) {
		b = appendBytes(b, name)
		b = appendBytes(b, v)
	})
	if removed > 0 {
		b = binary.AppendUvarint(b, removed)
		r.eachRemoved(func(name []byte) { b = appendBytes(b, name) })
	}
	return append(b, r.body...)
}

func appendBytes(b, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeResponse reads a record. Every length is checked against what is
// left, so damaged input is an error, never a panic or a huge allocation.
// The body, the fingerprint and the header lines alias rec.
func decodeResponse(rec []byte) (response, error) {
	if len(rec) < 4 || rec[0] != recordMagic || (rec[1] != recordVersion && rec[1] != recordVersionRemoved) {
		return response{}, errRecordFormat
	}
	r := response{status: int(binary.BigEndian.Uint16(rec[2:4]))}
	d := decoder{b: rec[4:]}
	r.fingerprint = d.bytes()
	r.count = d.uvarint()
	start := d.b
	for i := uint64(0); i < r.count && !d.err; i++ {
		d.bytes()
		d.bytes()
	}
	r.lines = start[:len(start)-len(d.b)]
	if rec[1] == recordVersionRemoved && !d.err {
		r.removedCount = d.uvarint()
		start = d.b
		for i := uint64(0); i < r.removedCount && !d.err; i++ {
			d.bytes()
		}
		// Version 2 is written only with names removed.
		if r.removedCount == 0 {
			d.err = true
		}
		r.removedLines = start[:len(start)-len(d.b)]
	}
	if d.err || r.status < 100 || r.status > 999 {
		return response{}, errRecordFormat
	}
	r.body = d.b
	return r, nil
}

type decoder struct {
	b   []byte
	err bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err || n > uint64(len(d.b)) {
		d.err = true
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}
