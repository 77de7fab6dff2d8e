package core

import (
	"math"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// A fence fits an Int64 up to 2^63-1; above it the attribute is a string.
func TestFenceAttr(t *testing.T) {
	for _, c := range []struct {
		fence uint64
		want  attribute.Value
	}{
		{1, attribute.Int64Value(1)},
		{math.MaxInt64, attribute.Int64Value(math.MaxInt64)},
		{math.MaxInt64 + 1, attribute.StringValue("9223372036854775808")},
		{math.MaxUint64, attribute.StringValue("18446744073709551615")},
	} {
		got := fenceAttr(c.fence)
		if got.Key != attrFence || got.Value != c.want {
			t.Errorf("fenceAttr(%d) = %v %v, want %v", c.fence, got.Key, got.Value.Emit(), c.want.Emit())
		}
	}
}
