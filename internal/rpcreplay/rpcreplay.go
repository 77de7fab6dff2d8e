// Package rpcreplay is what the gRPC and Connect adapters share for replay
// of unary calls: the request's fingerprint and the record of a response
// message, both from the message's protobuf encoding. The engine
// (httplock.Engine.ServeRecorded) keeps the record, checks the fingerprint
// and decides; this package only turns messages into bytes and back.
package rpcreplay

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Header marks a replayed response, in gRPC's lower-case metadata form;
// Connect sends it as an HTTP header, where case does not matter.
const Header = "idempotent-replayed"

// ErrNotProto is a request or response that is not a protobuf message:
// replay needs its encoding.
var ErrNotProto = errors.New("reqlock: replay needs protobuf messages")

// errRecord is a record this version cannot read: damaged, or of a message
// type this binary does not know.
var errRecord = errors.New("reqlock: the recorded response cannot be read by this server")

// recordVersion leads every record, so that a later format can be told
// apart during a rolling deploy.
const recordVersion = 1

// Fingerprint tells two calls with the same key apart: SHA-256 over the
// method and the request message's deterministic encoding, each
// length-prefixed. The encoding is the message's, not the wire's, so a
// retry sent as JSON matches one first sent in binary.
func Fingerprint(method string, req any) ([]byte, error) {
	m, ok := req.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%w: request is %T", ErrNotProto, req)
	}
	var buf [128]byte
	in := binary.AppendUvarint(buf[:0], uint64(len(method)))
	in = append(in, method...)
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	in = binary.AppendUvarint(in, uint64(len(body)))
	in = append(in, body...)
	sum := sha256.Sum256(in)
	return sum[:], nil
}

// Encode is the record of a response message: its full name, which
// rebuilds it, and its encoding.
//
//	1                     version
//	uvarint n, n bytes    the message's full name
//	the rest              the message, protobuf-encoded
func Encode(resp any) ([]byte, error) {
	m, ok := resp.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%w: response is %T", ErrNotProto, resp)
	}
	name := m.ProtoReflect().Descriptor().FullName()
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(name)+proto.Size(m))
	b = append(b, recordVersion)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	return proto.MarshalOptions{}.MarshalAppend(b, m)
}

// Decode rebuilds the response message of a record, as the type this
// binary registered under its name.
func Decode(rec []byte) (proto.Message, error) {
	if len(rec) < 1 || rec[0] != recordVersion {
		return nil, errRecord
	}
	n, k := binary.Uvarint(rec[1:])
	if k <= 0 || n > uint64(len(rec)-1-k) {
		return nil, errRecord
	}
	name := protoreflect.FullName(rec[1+k : 1+k+int(n)])
	mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errRecord, err)
	}
	m := mt.New().Interface()
	if err := proto.Unmarshal(rec[1+k+int(n):], m); err != nil {
		return nil, fmt.Errorf("%w: %w", errRecord, err)
	}
	return m, nil
}
