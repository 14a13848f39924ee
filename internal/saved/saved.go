// Package saved encodes the state upfd keeps across a restart (the
// journal) in a compact binary form, field by field as the Go types are
// declared: a new field is saved without being named anywhere else, and a
// journal of other types is told by its Layout, not misread.
//
// It is there for speed: every N4 request a pinned upfd answers waits for
// its changes to be encoded and written. A typical session took 1.85 KB
// and 5.5-8 µs as JSON; it takes some 260 B and 1.1 µs here, the encoder
// reading the values through unsafe pointers (encode.go).
// Decoding, once a take-over, uses reflection (decode.go).
//
// The encoding of a value, by kind:
//   - bool: a byte, 0 or 1; integers: varints (signed ones zigzag);
//     floats: 8 bytes, little endian.
//   - string: a uvarint length, then the bytes.
//   - slice and map: a uvarint, 0 for nil, else 1 + the count; then the
//     elements (a map's pairs in the order of their keys' encodings).
//   - pointer: a byte, 0 for nil; else 1, then the value.
//   - array: the elements; struct: its exported fields in order, and those
//     of embedded structs.
//   - a type with AppendBinary and UnmarshalBinary (time.Time, netip.Addr
//     and the like), []byte, an interface and Raw: a blob, a uvarint 0 for
//     nil, else 1 + the length, then the bytes. An interface's blob is its
//     value's encoding (what it points to, if a pointer): it reads back
//     into a Raw, to be read later into the type the reader knows.
package saved

import (
	"encoding"
	"fmt"
	"hash/fnv"
	"io"
	"reflect"
	"strconv"
	"sync"
)

// Raw is a value's encoding, kept to be read later.
type Raw []byte

// Append appends the encoding of v to b: of what v points to, if it is a
// pointer, which costs no copy. v is of this program's own types: one
// that cannot be saved (a channel, a func, an unexported field) is a bug,
// and panics.
func Append(b []byte, v any) []byte {
	if v == nil {
		panic("saved: Append(nil)")
	}
	p, t := valueOf(reflect.ValueOf(v))
	if p == nil {
		panic(fmt.Sprintf("saved: Append(%T(nil))", v))
	}
	return planOf(t).enc(b, p)
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
		return data, fmt.Errorf("saved: read into %T, not a pointer", v)
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

func describe(w io.Writer, t reflect.Type, seen map[reflect.Type]bool) {
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
	enc encoder
	dec decoder
}

var (
	plans      sync.Map // reflect.Type → *plan
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
	making := map[reflect.Type]*plan{}
	p := build(t, making)
	for t, p := range making { // whole now: others may use them
		plans.Store(t, p)
	}
	return p
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
	p.enc, p.dec = encoderOf(t, making), decoderOf(t, making)
	return p
}

func isBinary(t reflect.Type) bool {
	return t.Implements(appender) && reflect.PointerTo(t).Implements(unmarshals)
}

// field is a saved field's place in its struct, and its type's plan.
type field struct {
	offset uintptr // for the encoder
	index  int     // for the decoder
	p      *plan
}

func fieldsOf(t reflect.Type, making map[reflect.Type]*plan) []field {
	var fields []field
	for _, f := range savedFields(t) {
		fields = append(fields, field{f.Offset, f.Index[0], build(f.Type, making)})
	}
	return fields
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
