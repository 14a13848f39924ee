package saved

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"time"
	"unsafe"
)

// The encoder reads each value where it lies, through an unsafe.Pointer
// and the offsets and sizes reflection gives once per type: what
// reflect.Value would check on every field (that it is exported, of the
// kind asked) is checked once, when the plan is made.

// encoder appends the encoding of the value of its type at p.
type encoder func(b []byte, p unsafe.Pointer) []byte

func encoderOf(t reflect.Type, making map[reflect.Type]*plan) encoder {
	if isBinary(t) {
		return encBinary(t)
	}
	switch t.Kind() {
	case reflect.Bool:
		return encBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encInt(t.Size())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return encUint(t.Size())
	case reflect.Float32:
		return func(b []byte, p unsafe.Pointer) []byte { return appendFloat(b, float64(*(*float32)(p))) }
	case reflect.Float64:
		return func(b []byte, p unsafe.Pointer) []byte { return appendFloat(b, *(*float64)(p)) }
	case reflect.String:
		return encString
	case reflect.Interface:
		return encInterface(t)
	case reflect.Pointer:
		return encPointer(build(t.Elem(), making))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return encBytes
		}
		return encSlice(build(t.Elem(), making), t.Elem().Size())
	case reflect.Array:
		return encArray(build(t.Elem(), making), t.Elem().Size(), t.Len())
	case reflect.Map:
		return encMap(t, build(t.Key(), making), build(t.Elem(), making))
	case reflect.Struct:
		return encStruct(fieldsOf(t, making))
	}
	panic(fmt.Sprintf("saved: a %s cannot be saved", t))
}

// valueOf is where v's value lies, without a copy if v is a pointer (nil
// then if it is nil), and its type.
func valueOf(v reflect.Value) (unsafe.Pointer, reflect.Type) {
	if v.Kind() == reflect.Pointer {
		return v.UnsafePointer(), v.Type().Elem()
	}
	c := reflect.New(v.Type())
	c.Elem().Set(v)
	return c.UnsafePointer(), v.Type()
}

func encBool(b []byte, p unsafe.Pointer) []byte {
	if *(*bool)(p) {
		return append(b, 1)
	}
	return append(b, 0)
}

// encInt and encUint pick the encoder of an integer of size bytes.
func encInt(size uintptr) encoder {
	switch size {
	case 1:
		return encVarint[int8]
	case 2:
		return encVarint[int16]
	case 4:
		return encVarint[int32]
	}
	return encVarint[int64]
}

func encUint(size uintptr) encoder {
	switch size {
	case 1:
		return encUvarint[uint8]
	case 2:
		return encUvarint[uint16]
	case 4:
		return encUvarint[uint32]
	}
	return encUvarint[uint64]
}

func encVarint[T int8 | int16 | int32 | int64](b []byte, p unsafe.Pointer) []byte {
	return binary.AppendVarint(b, int64(*(*T)(p)))
}

func encUvarint[T uint8 | uint16 | uint32 | uint64](b []byte, p unsafe.Pointer) []byte {
	return binary.AppendUvarint(b, uint64(*(*T)(p)))
}

func appendFloat(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func encString(b []byte, p unsafe.Pointer) []byte {
	s := *(*string)(p)
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// encBytes encodes any slice of a byte kind: they all lie as a []byte.
func encBytes(b []byte, p unsafe.Pointer) []byte {
	s := *(*[]byte)(p)
	if s == nil {
		return append(b, 0)
	}
	return append(binary.AppendUvarint(b, uint64(len(s))+1), s...)
}

func encPointer(elem *plan) encoder {
	return func(b []byte, p unsafe.Pointer) []byte {
		to := *(*unsafe.Pointer)(p)
		if to == nil {
			return append(b, 0)
		}
		return elem.enc(append(b, 1), to)
	}
}

// encSlice reads a slice's header as a []byte's, which lies alike: its
// length is the count, its data the first element.
func encSlice(elem *plan, size uintptr) encoder {
	return func(b []byte, p unsafe.Pointer) []byte {
		s := *(*[]byte)(p)
		if s == nil {
			return append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(len(s))+1)
		first := unsafe.Pointer(unsafe.SliceData(s))
		for i := range uintptr(len(s)) {
			b = elem.enc(b, unsafe.Add(first, i*size))
		}
		return b
	}
}

func encArray(elem *plan, size uintptr, n int) encoder {
	return func(b []byte, p unsafe.Pointer) []byte {
		for i := range uintptr(n) {
			b = elem.enc(b, unsafe.Add(p, i*size))
		}
		return b
	}
}

func encStruct(fields []field) encoder {
	return func(b []byte, p unsafe.Pointer) []byte {
		for _, f := range fields {
			b = f.p.enc(b, unsafe.Add(p, f.offset))
		}
		return b
	}
}

// encMap writes the pairs in the order of their keys' encodings, so that
// a state is always saved alike. Maps are few and small in the state: the
// pairs go through reflection, each copied where the encoders can read it.
func encMap(t reflect.Type, key, elem *plan) encoder {
	return func(b []byte, p unsafe.Pointer) []byte {
		m := reflect.NewAt(t, p).Elem()
		if m.IsNil() {
			return append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(m.Len())+1)
		k, v := reflect.New(t.Key()), reflect.New(t.Elem())
		var pairs [][]byte
		for it := m.MapRange(); it.Next(); {
			k.Elem().SetIterKey(it)
			v.Elem().SetIterValue(it)
			pairs = append(pairs, elem.enc(key.enc(nil, k.UnsafePointer()), v.UnsafePointer()))
		}
		// Encodings are prefix-free, and keys unique: pairs differ first
		// in their keys.
		slices.SortFunc(pairs, bytes.Compare)
		for _, pair := range pairs {
			b = append(b, pair...)
		}
		return b
	}
}

// encInterface writes the value an interface holds, or what it points to.
func encInterface(t reflect.Type) encoder {
	return func(b []byte, p unsafe.Pointer) []byte {
		v := reflect.NewAt(t, p).Elem()
		if v.IsNil() {
			return append(b, 0)
		}
		at, vt := valueOf(v.Elem())
		if at == nil {
			return append(b, 0)
		}
		b, start := openBlob(b)
		return closeBlob(planOf(vt).enc(b, at), start)
	}
}

// appendBinary are the binary types the state holds most, called
// without reflection.
var appendBinary = map[reflect.Type]func(b []byte, p unsafe.Pointer) ([]byte, error){
	reflect.TypeFor[time.Time]():      func(b []byte, p unsafe.Pointer) ([]byte, error) { return (*time.Time)(p).AppendBinary(b) },
	reflect.TypeFor[netip.Addr]():     func(b []byte, p unsafe.Pointer) ([]byte, error) { return (*netip.Addr)(p).AppendBinary(b) },
	reflect.TypeFor[netip.AddrPort](): func(b []byte, p unsafe.Pointer) ([]byte, error) { return (*netip.AddrPort)(p).AppendBinary(b) },
	reflect.TypeFor[netip.Prefix]():   func(b []byte, p unsafe.Pointer) ([]byte, error) { return (*netip.Prefix)(p).AppendBinary(b) },
}

func encBinary(t reflect.Type) encoder {
	appendTo, ok := appendBinary[t]
	if !ok {
		appendTo = func(b []byte, p unsafe.Pointer) ([]byte, error) {
			return reflect.NewAt(t, p).Interface().(encoding.BinaryAppender).AppendBinary(b)
		}
	}
	return func(b []byte, p unsafe.Pointer) []byte {
		b, start := openBlob(b)
		b, err := appendTo(b, p)
		if err != nil {
			panic(fmt.Sprintf("saved: %s: %v", t, err)) // our own values: a bug
		}
		return closeBlob(b, start)
	}
}

// openBlob begins a blob whose length is not known yet: most are short,
// so a byte is kept for it, at at. closeBlob writes it once the blob's
// bytes are appended, moving them only when it takes more than the byte.
func openBlob(b []byte) (_ []byte, at int) { return append(b, 0), len(b) }

func closeBlob(b []byte, at int) []byte {
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
