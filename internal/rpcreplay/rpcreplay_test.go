package rpcreplay

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, m := range []proto.Message{
		wrapperspb.String("order-1"),
		wrapperspb.String(""), // encodes to no bytes: still a record
		structpb.NewStringValue("x"),
	} {
		rec, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(rec)
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if !proto.Equal(got, m) {
			t.Fatalf("decoded %v, want %v", got, m)
		}
	}
}

func TestDecodeRefusesDamage(t *testing.T) {
	rec, _ := Encode(wrapperspb.String("order-1"))
	unknown := append([]byte{recordVersion, 3}, "x.Y"...)
	for name, b := range map[string][]byte{
		"empty":         nil,
		"other version": append([]byte{9}, rec[1:]...),
		"name cut":      rec[:4],
		"unknown type":  unknown,
		"bad message":   append(bytes.Clone(rec[:len(rec)-7]), 0xff),
	} {
		if _, err := Decode(b); !errors.Is(err, errRecord) {
			t.Errorf("%s: %v, want errRecord", name, err)
		}
	}
}

func TestFingerprint(t *testing.T) {
	a, _ := Fingerprint("/pkg.S/M", wrapperspb.String("a"))
	same, _ := Fingerprint("/pkg.S/M", wrapperspb.String("a"))
	other, _ := Fingerprint("/pkg.S/M", wrapperspb.String("b"))
	method, _ := Fingerprint("/pkg.S/N", wrapperspb.String("a"))
	switch {
	case !bytes.Equal(a, same):
		t.Fatal("the same call has two fingerprints")
	case bytes.Equal(a, other), bytes.Equal(a, method):
		t.Fatal("another request or method has the same fingerprint")
	}
	if _, err := Fingerprint("/pkg.S/M", "not a message"); !errors.Is(err, ErrNotProto) {
		t.Fatalf("a non-message: %v, want ErrNotProto", err)
	}
	if _, err := Encode(struct{}{}); !errors.Is(err, ErrNotProto) {
		t.Fatalf("a non-message: %v, want ErrNotProto", err)
	}
}
