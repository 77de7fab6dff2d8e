package httpcases

import (
	"reflect"
	"slices"
	"testing"

	"github.com/reqlock/reqlock/httplock"
)

// CheckConfigMirror fails t when an adapter's Config C no longer mirrors
// httplock.Config: a field of httplock.Config that C lacks, or has with
// another type, or that toEngine (the adapter's own conversion) does not
// carry over. differ names the fields meant to differ, each with why: they
// may be absent from C, typed for the framework, or C's own (Skipper, …).
// A field C has and httplock.Config does not must be in differ too, so
// that a field renamed on one side is noticed on the other.
func CheckConfigMirror[C any](t *testing.T, toEngine func(C) httplock.Config, differ map[string]string) {
	t.Helper()
	engine := reflect.TypeFor[httplock.Config]()
	adapter := reflect.TypeFor[C]()
	for f := range fields(engine) {
		if _, ok := differ[f.Name]; ok {
			continue
		}
		af, ok := adapter.FieldByName(f.Name)
		switch {
		case !ok:
			t.Errorf("%v has no field %s (%v) of httplock.Config: add it, and carry it over to the engine", adapter, f.Name, f.Type)
		case af.Type != f.Type:
			t.Errorf("%v.%s is %v, httplock.Config's is %v", adapter, f.Name, af.Type, f.Type)
		}
	}
	for af := range fields(adapter) {
		if _, ok := engine.FieldByName(af.Name); !ok {
			if _, meant := differ[af.Name]; !meant {
				t.Errorf("%v.%s is not a field of httplock.Config, nor listed as meant to differ", adapter, af.Name)
			}
		}
	}

	// Every mirrored field set, to a value of its own: the engine's config
	// must hold the same values.
	var c C
	cv := reflect.ValueOf(&c).Elem()
	for af := range fields(adapter) {
		cv.FieldByIndex(af.Index).Set(nonZero(t, af.Type))
	}
	got := reflect.ValueOf(toEngine(c))
	for f := range fields(engine) {
		if _, ok := differ[f.Name]; ok {
			continue
		}
		if _, ok := adapter.FieldByName(f.Name); !ok {
			continue // reported above
		}
		if !same(got.FieldByIndex(f.Index), cv.FieldByName(f.Name)) {
			t.Errorf("the engine's Config.%s is not %v.%s: the conversion does not carry it over", f.Name, adapter, f.Name)
		}
	}
}

// fields yields the exported fields of struct type t, through embedded
// structs as Go promotes them (an embedded struct itself is not yielded).
func fields(t reflect.Type) func(func(reflect.StructField) bool) {
	return func(yield func(reflect.StructField) bool) {
		for _, f := range reflect.VisibleFields(t) {
			if !f.IsExported() || (f.Anonymous && f.Type.Kind() == reflect.Struct) {
				continue
			}
			if len(f.Index) > 1 && slices.Contains(shadowed(t), f.Name) {
				continue
			}
			if !yield(f) {
				return
			}
		}
	}
}

// shadowed names the fields of t's embedded structs that a field of t's own
// hides: VisibleFields lists both.
func shadowed(t reflect.Type) []string {
	var out []string
	for _, f := range reflect.VisibleFields(t) {
		if len(f.Index) == 1 && !f.Anonymous {
			out = append(out, f.Name)
		}
	}
	return out
}

// nonZero is a value of type t that is not its zero value, and not equal to
// that of another field of the same type set the same way: each call makes a
// new pointer, func or slice.
func nonZero(t *testing.T, typ reflect.Type) reflect.Value {
	t.Helper()
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1) // Mode 1 is Wait, a valid one
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.String:
		v.SetString("x")
	case reflect.Pointer:
		v.Set(reflect.New(typ.Elem()))
	case reflect.Func:
		// A func says which it is by what it panics with: funcs made by
		// MakeFunc share one code pointer.
		id := new(byte)
		v.Set(reflect.MakeFunc(typ, func([]reflect.Value) []reflect.Value { panic(id) }))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(typ, 1, 1))
	case reflect.Map:
		v.Set(reflect.MakeMap(typ))
	case reflect.Interface:
		// Left nil: no value of an unknown interface can be made up.
	default:
		t.Fatalf("CheckConfigMirror cannot make a %v: teach nonZero", typ)
	}
	return v
}

// same reports whether a and b are the same value: for pointers, funcs,
// slices and maps, the same one, not an equal one.
func same(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Func:
		return !a.IsNil() && !b.IsNil() && funcID(a) == funcID(b)
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.UnsafePointer:
		return a.Pointer() == b.Pointer()
	}
	return a.Equal(b)
}

// funcID is what a func made by nonZero panics with.
func funcID(f reflect.Value) (id any) {
	defer func() { id = recover() }()
	args := make([]reflect.Value, f.Type().NumIn())
	for i := range args {
		args[i] = reflect.Zero(f.Type().In(i))
	}
	if f.Type().IsVariadic() {
		f.CallSlice(args)
	} else {
		f.Call(args)
	}
	return nil
}
