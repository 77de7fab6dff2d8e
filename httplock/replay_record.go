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
//	the rest               the body
//
// The version byte lets a later format be told apart during a rolling
// deploy: an instance that cannot read a record answers 500 rather than
// replaying something it misreads.
const (
	recordMagic   = 'H'
	recordVersion = 1
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
	n := 4 + binary.MaxVarintLen64 + len(r.fingerprint) + binary.MaxVarintLen64 + len(r.lines) + len(r.body)
	for name, vs := range r.header {
		for _, v := range vs {
			n += 2*binary.MaxVarintLen64 + len(name) + len(v)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, recordMagic, recordVersion)
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
	return append(b, r.body...)
}

func appendBytes(b, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeResponse reads a record. Every length is checked against what is
// left, so damaged input is an error, never a panic or a huge allocation.
// The body, the fingerprint and the header lines alias rec.
func decodeResponse(rec []byte) (response, error) {
	if len(rec) < 4 || rec[0] != recordMagic || rec[1] != recordVersion {
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
	if d.err || r.status < 100 || r.status > 999 {
		return response{}, errRecordFormat
	}
	r.lines = start[:len(start)-len(d.b)]
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
