// Package saved encodes the state upfd keeps across a restart (the
// journal) in a compact binary form, field by field as the Go types are
// declared: a new field is saved without being named anywhere else, and a
// journal of other types is told by its Layout, not misread.
//
// It is JSON's reach at a tenth of its cost: a session's state is about
// 2.4 KB of JSON, 8-13 µs to make on this project's VMs, on the path of
// every N4 request a pinned upfd answers.
//
// The encoding of a value, by kind:
//   - bool: a byte, 0 or 1; integers: varints (signed ones zigzag);
//     floats: 8 bytes, little endian.
//   - string: a uvarint length, then the bytes.
//   - slice and map: a uvarint, 0 for nil, else 1 + the count; then the
//     elements (a map's pairs in the order of their keys' encodings).
//   - pointer: a byte, 0 for nil; else 1, then the value.
//   - struct: its exported fields in order, and those of embedded structs.
//   - a type with AppendBinary and UnmarshalBinary (time.Time, netip.Addr
//     and the like), []byte, an interface and Raw: a blob, a uvarint 0
//     for nil, else 1 + the length, then the bytes. An interface's blob is
//     its value's encoding: it reads back into a Raw, to be read later
//     into the type the reader knows.
package saved

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
)

// Raw is a value's encoding, kept to be read later.
type Raw []byte

// Append appends the encoding of v to b. v is of this program's own
// types: one that cannot be saved (a channel, a func, an unexported
// field) is a bug, and panics.
func Append(b []byte, v any) []byte {
	if v == nil {
		panic("saved: Append(nil)")
	}
	return planOf(reflect.TypeOf(v)).enc(b, reflect.ValueOf(v))
}

// Read decodes data, all of it, into what v points to.
func Read(data []byte, v any) error {
	rest, err := Next(data, v)
	if err == nil && len(rest) > 0 {
		return fmt.Errorf("saved: read %T: %d bytes after the value", v, len(rest))
	}
	return err
}

// Next decodes the value data begins with into what v points to, and
// returns what follows it.
func Next(data []byte, v any) (rest []byte, err error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return data, fmt.Errorf("saved: Next into %T, not a pointer", v)
	}
	r := &reader{b: data}
	planOf(rv.Type().Elem()).dec(r, rv.Elem())
	if r.err != nil {
		return data, fmt.Errorf("saved: read %s: %w", rv.Type().Elem(), r.err)
	}
	return r.b, nil
}

// Layout is a digest of the declarations of the types of vs, and of all
// the types they hold: it changes when the encoding of any of them does.
func Layout(vs ...any) string {
	h := fnv.New64a()
	seen := map[reflect.Type]bool{}
	for _, v := range vs {
		describe(h, reflect.TypeOf(v), seen)
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

func describe(w interface{ Write([]byte) (int, error) }, t reflect.Type, seen map[reflect.Type]bool) {
	fmt.Fprintf(w, "%s %s;", t, t.Kind())
	if seen[t] || isBinary(t) {
		return
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		describe(w, t.Elem(), seen)
	case reflect.Map:
		describe(w, t.Key(), seen)
		describe(w, t.Elem(), seen)
	case reflect.Struct:
		for _, f := range savedFields(t) {
			fmt.Fprintf(w, "%s:", f.Name)
			describe(w, f.Type, seen)
		}
	}
}

// plan is how values of one type are encoded and decoded.
type plan struct {
	enc func(b []byte, v reflect.Value) []byte
	dec func(r *reader, v reflect.Value) // v is settable
}

var plans sync.Map // reflect.Type → *plan

var (
	building   sync.Mutex
	appender   = reflect.TypeFor[encoding.BinaryAppender]()
	unmarshals = reflect.TypeFor[encoding.BinaryUnmarshaler]()
)

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	building.Lock()
	defer building.Unlock()
	return build(t, map[reflect.Type]*plan{})
}

// build makes t's plan, and those of the types it holds; making holds
// the ones begun, so that a type that holds itself refers to its own.
func build(t reflect.Type, making map[reflect.Type]*plan) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := making[t]; ok {
		return p
	}
	p := &plan{}
	making[t] = p
	switch {
	case isBinary(t):
		p.enc, p.dec = encBinary, decBinary
	default:
		p.enc, p.dec = byKind(t, making)
	}
	plans.Store(t, p)
	return p
}

func isBinary(t reflect.Type) bool {
	return t.Implements(appender) && reflect.PointerTo(t).Implements(unmarshals)
}

func byKind(t reflect.Type, making map[reflect.Type]*plan) (func([]byte, reflect.Value) []byte, func(*reader, reflect.Value)) {
	switch t.Kind() {
	case reflect.Bool:
		return encBool, decBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encInt, decInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return encUint, decUint
	case reflect.Float32, reflect.Float64:
		return encFloat, decFloat
	case reflect.String:
		return encString, decString
	case reflect.Interface:
		return encInterface, func(r *reader, v reflect.Value) { r.fail("a %s: read it into a saved.Raw", t) }
	case reflect.Pointer:
		return pointerPlan(build(t.Elem(), making))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return encBytes, decBytes
		}
		return slicePlan(build(t.Elem(), making))
	case reflect.Array:
		return arrayPlan(build(t.Elem(), making))
	case reflect.Map:
		return mapPlan(t, build(t.Key(), making), build(t.Elem(), making))
	case reflect.Struct:
		return structPlan(t, making)
	}
	panic(fmt.Sprintf("saved: a %s cannot be saved", t))
}

// savedFields are t's fields that are saved: the exported ones, and
// embedded structs (whose exported fields are promoted, as JSON has them).
func savedFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !(f.Anonymous && f.Type.Kind() == reflect.Struct) {
			panic(fmt.Sprintf("saved: %s.%s is not exported: it would not be saved", t, f.Name))
		}
		out = append(out, f)
	}
	return out
}

func structPlan(t reflect.Type, making map[reflect.Type]*plan) (func([]byte, reflect.Value) []byte, func(*reader, reflect.Value)) {
	type field struct {
		i int
		p *plan
	}
	var fields []field
	for _, f := range savedFields(t) {
		fields = append(fields, field{f.Index[0], build(f.Type, making)})
	}
	return func(b []byte, v reflect.Value) []byte {
			for _, f := range fields {
				b = f.p.enc(b, v.Field(f.i))
			}
			return b
		}, func(r *reader, v reflect.Value) {
			for _, f := range fields {
				if r.err != nil {
					return
				}
				f.p.dec(r, v.Field(f.i))
			}
		}
}

func pointerPlan(elem *plan) (func([]byte, reflect.Value) []byte, func(*reader, reflect.Value)) {
	return func(b []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(b, 0)
			}
			return elem.enc(append(b, 1), v.Elem())
		}, func(r *reader, v reflect.Value) {
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

func slicePlan(elem *plan) (func([]byte, reflect.Value) []byte, func(*reader, reflect.Value)) {
	return func(b []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(v.Len())+1)
			for i := range v.Len() {
				b = elem.enc(b, v.Index(i))
			}
			return b
		}, func(r *reader, v reflect.Value) {
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

func arrayPlan(elem *plan) (func([]byte, reflect.Value) []byte, func(*reader, reflect.Value)) {
	return func(b []byte, v reflect.Value) []byte {
			for i := range v.Len() {
				b = elem.enc(b, v.Index(i))
			}
			return b
		}, func(r *reader, v reflect.Value) {
			for i := 0; i < v.Len() && r.err == nil; i++ {
				elem.dec(r, v.Index(i))
			}
		}
}

// mapPlan writes the pairs in the order of their keys' encodings, so that
// a state is always saved alike.
func mapPlan(t reflect.Type, key, elem *plan) (func([]byte, reflect.Value) []byte, func(*reader, reflect.Value)) {
	return func(b []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(v.Len())+1)
			pairs := make([][]byte, 0, v.Len())
			for it := v.MapRange(); it.Next(); {
				pairs = append(pairs, elem.enc(key.enc(nil, it.Key()), it.Value()))
			}
			slices.SortFunc(pairs, bytes.Compare) // keys are unique: the first difference is in the key
			for _, p := range pairs {
				b = append(b, p...)
			}
			return b
		}, func(r *reader, v reflect.Value) {
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

func encBool(b []byte, v reflect.Value) []byte {
	if v.Bool() {
		return append(b, 1)
	}
	return append(b, 0)
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

func encInt(b []byte, v reflect.Value) []byte { return binary.AppendVarint(b, v.Int()) }

func decInt(r *reader, v reflect.Value) {
	x, n := binary.Varint(r.b)
	if n <= 0 || v.OverflowInt(x) {
		r.fail("a bad %s", v.Type())
		return
	}
	r.b = r.b[n:]
	v.SetInt(x)
}

func encUint(b []byte, v reflect.Value) []byte { return binary.AppendUvarint(b, v.Uint()) }

func decUint(r *reader, v reflect.Value) {
	x, ok := r.uvarint()
	if !ok || v.OverflowUint(x) {
		r.fail("a bad %s", v.Type())
		return
	}
	v.SetUint(x)
}

func encFloat(b []byte, v reflect.Value) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
}

func decFloat(r *reader, v reflect.Value) {
	if b := r.take(8); b != nil {
		v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
}

func encString(b []byte, v reflect.Value) []byte {
	s := v.String()
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func decString(r *reader, v reflect.Value) {
	n, ok := r.uvarint()
	if !ok || n > uint64(len(r.b)) {
		r.fail("a string longer than what is left")
		return
	}
	v.SetString(string(r.take(int(n))))
}

// Blobs: []byte, Raw, interfaces and binary types.

func encBytes(b []byte, v reflect.Value) []byte {
	if v.IsNil() {
		return append(b, 0)
	}
	return appendBlob(b, v.Bytes())
}

func decBytes(r *reader, v reflect.Value) {
	if blob, ok := r.blob(); ok {
		v.SetBytes(slices.Clone(blob))
	} else {
		v.SetZero()
	}
}

func encInterface(b []byte, v reflect.Value) []byte {
	if v.IsNil() {
		return append(b, 0)
	}
	e := v.Elem()
	return sized(b, func(b []byte) []byte { return planOf(e.Type()).enc(b, e) })
}

func encBinary(b []byte, v reflect.Value) []byte {
	return sized(b, func(b []byte) []byte {
		b, err := v.Interface().(encoding.BinaryAppender).AppendBinary(b)
		if err != nil {
			panic(fmt.Sprintf("saved: %s: %v", v.Type(), err)) // our own values: a bug
		}
		return b
	})
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

func appendBlob(b, blob []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(blob))+1), blob...)
}

// sized appends what fill appends to b as a blob. Most are short, so the
// length takes a byte ahead of them, and they move only when it does not.
func sized(b []byte, fill func([]byte) []byte) []byte {
	at := len(b)
	b = fill(append(b, 0))
	n := uint64(len(b) - at - 1)
	if n+1 < 0x80 {
		b[at] = byte(n + 1)
		return b
	}
	var head [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(head[:], n+1)
	b = append(b, head[1:h]...)
	copy(b[at+h:], b[at+1:at+1+int(n)])
	copy(b[at:], head[:h])
	return b
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
