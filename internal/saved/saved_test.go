package saved

import (
	"bytes"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

type inner struct {
	Name string
	Addr netip.Addr
}

type embedded struct{ Slot uint32 }

// celsius saves itself, as time.Time does, its field hidden: a binary
// type the encoder calls through reflection.
type celsius struct{ tenths int16 }

func (c celsius) AppendBinary(b []byte) ([]byte, error) {
	return append(b, byte(c.tenths>>8), byte(c.tenths)), nil
}

func (c *celsius) UnmarshalBinary(b []byte) error {
	if len(b) != 2 {
		return fmt.Errorf("%d bytes", len(b))
	}
	c.tenths = int16(b[0])<<8 | int16(b[1])
	return nil
}

// savedAll holds one of each kind the state uses, as the state's types do;
// V is any to save, Raw to read back what the interfaces held.
type savedAll[V any] struct {
	embedded
	On       bool
	Small    int8
	Big      int64
	Count    uint64
	Ratio    float64
	Name     string
	At       time.Time
	Temp     celsius
	Peer     netip.AddrPort
	Prefix   netip.Prefix
	B        []byte
	Empty    []byte
	Nothing  []byte
	IDs      []uint32
	NoIDs    []uint32
	Ptr      *inner
	NilPtr   *uint8
	ZeroPtr  *uint8
	Arr      [3]uint16
	Inners   []inner
	ByPrefix map[netip.Prefix]netip.Addr
	NilMap   map[string]int
	Val      V
	NoVal    V
}

type (
	every = savedAll[any]
	later = savedAll[Raw]
)

func sample() every {
	zero := uint8(0)
	return every{
		embedded: embedded{Slot: 70_000}, On: true, Small: -128, Big: -1 << 40, Count: 1<<64 - 1, Ratio: 0.25,
		Name: strings.Repeat("é", 100), At: time.Date(2026, 11, 26, 16, 0, 0, 123, time.UTC), Temp: celsius{-273},
		Peer: netip.MustParseAddrPort("[2001:db8::1]:8805"), Prefix: netip.MustParsePrefix("10.45.0.0/16"),
		B: bytes.Repeat([]byte{7}, 300), Empty: []byte{}, IDs: []uint32{1, 0, 1 << 31}, NoIDs: []uint32{},
		Ptr: &inner{"x", netip.MustParseAddr("198.18.3.2")}, ZeroPtr: &zero, Arr: [3]uint16{1, 2, 65535},
		Inners:   []inner{{"a", netip.Addr{}}, {"b", netip.IPv6Loopback()}},
		ByPrefix: map[netip.Prefix]netip.Addr{netip.MustParsePrefix("10.0.0.0/8"): netip.MustParseAddr("10.0.0.9"), netip.MustParsePrefix("fd00::/64"): netip.MustParseAddr("fd00::2")},
		Val:      inner{"in an interface", netip.MustParseAddr("10.0.0.1")},
	}
}

// What is saved reads back as it was: nil apart from empty, zero
// pointers apart from nil, a value in an interface as a Raw to read later.
func TestReadsBack(t *testing.T) {
	in := sample()
	b := Append(nil, in)
	var out later
	if err := Read(b, &out); err != nil {
		t.Fatal(err)
	}
	var val inner
	if err := Read(out.Val, &val); err != nil {
		t.Fatal(err)
	}
	if val != in.Val || out.NoVal != nil {
		t.Errorf("the interfaces read back as %+v and %v", val, out.NoVal)
	}
	if out.Slot != in.Slot {
		t.Errorf("the embedded struct's field read back as %d", out.Slot)
	}
	// Field by field: later is every with Raw for any.
	wv, ov := reflect.ValueOf(in), reflect.ValueOf(out)
	for i := range wv.NumField() {
		f := wv.Type().Field(i)
		if !f.IsExported() || f.Name == "Val" || f.Name == "NoVal" {
			continue
		}
		if w, o := wv.Field(i).Interface(), ov.Field(i).Interface(); !reflect.DeepEqual(w, o) {
			t.Errorf("%s: read back %#v, want %#v", f.Name, o, w)
		}
	}
	if out.Empty == nil || out.Nothing != nil || out.NoIDs == nil || out.NilMap != nil || out.ZeroPtr == nil {
		t.Error("nil and empty are not told apart")
	}
	if !bytes.Equal(Append(nil, in), Append(nil, in)) {
		t.Error("the same value is saved two ways (map order?)")
	}
}

// A blob of 127 bytes and more has a longer length ahead of it: the
// bytes move, and still read back.
func TestBlobLengths(t *testing.T) {
	for _, n := range []int{0, 1, 125, 126, 127, 128, 16383, 16384, 70000} {
		v := struct{ Val any }{Val: bytes.Repeat([]byte{0xab}, n)}
		var out struct{ Val Raw }
		if err := Read(Append([]byte{1, 2, 3}, v)[3:], &out); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		var got []byte
		if err := Read(out.Val, &got); err != nil || len(got) != n || (n > 0 && got[n-1] != 0xab) {
			t.Errorf("%d bytes: read back %d (%v)", n, len(got), err)
		}
	}
}

// Data cut short or changed is an error, never a panic or a huge
// allocation.
func TestBadDataIsAnError(t *testing.T) {
	b := Append(nil, sample())
	for n := range len(b) {
		var out later
		if err := Read(b[:n], &out); err == nil {
			t.Fatalf("%d of %d bytes read without an error", n, len(b))
		}
	}
	var out later
	if err := Read(append(b, 0), &out); err == nil || !strings.Contains(err.Error(), "1 bytes after") {
		t.Errorf("a byte too many: %v", err)
	}
	huge := []byte{0xff, 0xff, 0xff, 0xff, 0x0f}
	var s []uint64
	if err := Read(huge, &s); err == nil {
		t.Error("a count of 4 billion read")
	}
	var into any
	if err := Read(Append(nil, uint8(1)), &into); err == nil {
		t.Error("read into an interface")
	}
}

// Whatever a journal holds, torn or foreign, reads as a value or an
// error, never a panic (make fuzz).
func FuzzRead(f *testing.F) {
	f.Add(Append(nil, sample()))
	f.Fuzz(func(t *testing.T, b []byte) {
		var out later
		_ = Read(b, &out)
	})
}

// The Layout changes with a field's name, type or order, and is the
// same for the same declarations.
func TestLayout(t *testing.T) {
	type a struct {
		X uint32
		Y string
	}
	type renamed struct {
		X uint32
		Z string
	}
	type retyped struct {
		X uint64
		Y string
	}
	type reordered struct {
		Y string
		X uint32
	}
	type deeper struct{ In []a }
	type deeperChanged struct{ In []retyped }
	base := Layout(a{})
	if Layout(a{}) != base {
		t.Fatal("the layout is not stable")
	}
	for _, v := range []any{renamed{}, retyped{}, reordered{}} {
		if Layout(v) == base {
			t.Errorf("%T has the layout of a", v)
		}
	}
	if Layout(deeper{}) == Layout(deeperChanged{}) {
		t.Error("a change in a type held in a slice does not change the layout")
	}
}

// A type that would lose a field is a bug, told at once.
func TestUnexportedFieldPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "hidden is not exported") {
			t.Errorf("recovered %v", r)
		}
	}()
	Append(nil, struct {
		Shown  int
		hidden int
	}{})
}

func BenchmarkAppend(b *testing.B) {
	v, buf := sample(), []byte(nil)
	for b.Loop() {
		buf = Append(buf[:0], &v)
	}
}

// A type that holds itself refers to its own plan.
func TestATypeThatHoldsItself(t *testing.T) {
	type node struct {
		V    int
		Next *node
	}
	in := &node{1, &node{2, &node{3, nil}}}
	var out node
	if err := Read(Append(nil, in), &out); err != nil || !reflect.DeepEqual(&out, in) {
		t.Errorf("read back %+v (%v)", out, err)
	}
}
