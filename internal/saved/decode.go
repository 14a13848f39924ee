package saved

import (
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
)

// The decoder runs once a take-over, and reads what may be a torn or
// foreign file: it goes through reflection, checks every length against
// what is left, and stops at the first error.

// decoder reads a value of its type into v, which is settable.
type decoder func(r *reader, v reflect.Value)

func decoderOf(t reflect.Type, making map[reflect.Type]*plan) decoder {
	if isBinary(t) {
		return decBinary
	}
	switch t.Kind() {
	case reflect.Bool:
		return decBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return decUint
	case reflect.Float32, reflect.Float64:
		return decFloat
	case reflect.String:
		return decString
	case reflect.Interface:
		return func(r *reader, v reflect.Value) { r.fail("a %s: read it into a saved.Raw", t) }
	case reflect.Pointer:
		return decPointer(build(t.Elem(), making))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return decBytes
		}
		return decSlice(build(t.Elem(), making))
	case reflect.Array:
		return decArray(build(t.Elem(), making))
	case reflect.Map:
		return decMap(t, build(t.Key(), making), build(t.Elem(), making))
	case reflect.Struct:
		return decStruct(fieldsOf(t, making))
	}
	panic(fmt.Sprintf("saved: a %s cannot be saved", t))
}

func decBool(r *reader, v reflect.Value) {
	switch r.byte() {
	case 0:
		v.SetBool(false)
	case 1:
		v.SetBool(true)
	default:
		r.fail("a bool is not 0 or 1")
	}
}

func decInt(r *reader, v reflect.Value) {
	if r.err != nil {
		return
	}
	x, n := binary.Varint(r.b)
	if n <= 0 || v.OverflowInt(x) {
		r.fail("a bad %s", v.Type())
		return
	}
	r.b = r.b[n:]
	v.SetInt(x)
}

func decUint(r *reader, v reflect.Value) {
	x, ok := r.uvarint()
	if ok && v.OverflowUint(x) {
		r.fail("a bad %s", v.Type())
	}
	if r.err == nil {
		v.SetUint(x)
	}
}

func decFloat(r *reader, v reflect.Value) {
	if b := r.take(8); b != nil {
		v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
}

func decString(r *reader, v reflect.Value) {
	n, ok := r.uvarint()
	if ok && n > uint64(len(r.b)) {
		r.fail("a string of %d bytes, with %d left", n, len(r.b))
	}
	if r.err == nil {
		v.SetString(string(r.take(int(n))))
	}
}

// decBytes reads []byte, Raw and the blob an interface was saved as.
func decBytes(r *reader, v reflect.Value) {
	if blob, ok := r.blob(); ok {
		v.SetBytes(slices.Clone(blob))
	} else {
		v.SetZero()
	}
}

func decBinary(r *reader, v reflect.Value) {
	blob, ok := r.blob()
	if !ok {
		r.fail("a %s that is nil", v.Type())
		return
	}
	if err := v.Addr().Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary(blob); err != nil {
		r.fail("%s: %v", v.Type(), err)
	}
}

func decPointer(elem *plan) decoder {
	return func(r *reader, v reflect.Value) {
		switch r.byte() {
		case 0:
			v.SetZero()
		case 1:
			p := reflect.New(v.Type().Elem())
			elem.dec(r, p.Elem())
			v.Set(p)
		default:
			r.fail("a pointer's mark is not 0 or 1")
		}
	}
}

func decSlice(elem *plan) decoder {
	return func(r *reader, v reflect.Value) {
		n, ok := r.count()
		if !ok {
			v.SetZero()
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n && r.err == nil; i++ {
			elem.dec(r, s.Index(i))
		}
		v.Set(s)
	}
}

func decArray(elem *plan) decoder {
	return func(r *reader, v reflect.Value) {
		for i := 0; i < v.Len() && r.err == nil; i++ {
			elem.dec(r, v.Index(i))
		}
	}
}

func decMap(t reflect.Type, key, elem *plan) decoder {
	return func(r *reader, v reflect.Value) {
		n, ok := r.count()
		if !ok {
			v.SetZero()
			return
		}
		m := reflect.MakeMapWithSize(t, n)
		for i := 0; i < n && r.err == nil; i++ {
			k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			key.dec(r, k)
			elem.dec(r, e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	}
}

func decStruct(fields []field) decoder {
	return func(r *reader, v reflect.Value) {
		for _, f := range fields {
			if r.err != nil {
				return
			}
			f.p.dec(r, v.Field(f.index))
		}
	}
}

// reader is what is left to decode, and the first error met.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

var errShort = errors.New("the data ends early")

func (r *reader) take(n int) []byte {
	if r.err != nil || n > len(r.b) {
		if r.err == nil {
			r.err = errShort
		}
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) byte() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0xff
}

func (r *reader) uvarint() (uint64, bool) {
	if r.err != nil {
		return 0, false
	}
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("a bad varint")
		return 0, false
	}
	r.b = r.b[n:]
	return x, true
}

// count reads a slice's or map's count; false for nil. A count beyond
// the bytes left is an error, not an allocation.
func (r *reader) count() (int, bool) {
	x, ok := r.uvarint()
	if !ok || x == 0 {
		return 0, false
	}
	if x-1 > uint64(len(r.b)) {
		r.fail("a count of %d, with %d bytes left", x-1, len(r.b))
		return 0, false
	}
	return int(x - 1), true
}

// blob reads a blob; false for nil.
func (r *reader) blob() ([]byte, bool) {
	x, ok := r.uvarint()
	if !ok || x == 0 {
		return nil, false
	}
	if x-1 > uint64(len(r.b)) {
		r.fail("a blob of %d bytes, with %d left", x-1, len(r.b))
		return nil, false
	}
	return r.take(int(x - 1)), true
}
