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

// response is a recorded response.
type response struct {
	status      int
	header      http.Header
	body        []byte
	fingerprint []byte
}

func (r *response) encode() []byte {
	n := 4 + binary.MaxVarintLen64 + len(r.fingerprint) + binary.MaxVarintLen64 + len(r.body)
	for name, vs := range r.header {
		for _, v := range vs {
			n += 2*binary.MaxVarintLen64 + len(name) + len(v)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, recordMagic, recordVersion)
	b = binary.BigEndian.AppendUint16(b, uint16(r.status))
	b = appendBytes(b, r.fingerprint)
	lines := 0
	for _, vs := range r.header {
		lines += len(vs)
	}
	b = binary.AppendUvarint(b, uint64(lines))
	for name, vs := range r.header {
		for _, v := range vs {
			b = appendBytes(b, []byte(name))
			b = appendBytes(b, []byte(v))
		}
	}
	return append(b, r.body...)
}

func appendBytes(b, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeResponse reads a record. Every length is checked against what is
// left, so damaged input is an error, never a panic or a huge allocation.
// The body and fingerprint alias rec.
func decodeResponse(rec []byte) (*response, error) {
	if len(rec) < 4 || rec[0] != recordMagic || rec[1] != recordVersion {
		return nil, errRecordFormat
	}
	r := &response{status: int(binary.BigEndian.Uint16(rec[2:4]))}
	d := decoder{b: rec[4:]}
	r.fingerprint = d.bytes()
	lines := d.uvarint()
	// Each line takes at least two bytes: a bound before any allocation.
	if lines > uint64(len(d.b))/2 {
		d.err = true
	}
	if !d.err && lines > 0 {
		r.header = make(http.Header, min(lines, 16))
		for range lines {
			name, v := d.bytes(), d.bytes()
			if d.err {
				break
			}
			r.header[string(name)] = append(r.header[string(name)], string(v))
		}
	}
	if d.err || r.status < 100 || r.status > 999 {
		return nil, errRecordFormat
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
