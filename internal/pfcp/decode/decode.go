// Package decode reads PFCP session requests (TS 29.244 §7.5) into the
// session model. Wire types stop here: what leaves is a
// session.Establish or a session.Modify, or a *session.Error with the
// cause and Offending IE the refusal carries.
//
// Each request, and each grouped IE in it, is a group: a table of the IEs
// it may hold, each with what reading it does and whether it may occur
// more than once, and the IEs it must hold. One loop (group.apply) reads
// IEs by a table, so that adding an IE is a line in its group's table.
package decode

import (
	"errors"
	"fmt"
	"slices"

	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/internal/session"
)

// field is what a group does with one IE type.
type field[T any] struct {
	read   func(v *T, k *ie.IE) error
	repeat repeat
}

// repeat says what a second IE of a type is.
type repeat uint8

const (
	once        repeat = iota // the spec allows one: a second is Mandatory IE incorrect
	several                   // the spec allows several, each read
	onlyOneHere               // the spec allows several, the UPF acts on one: a second is refused
)

// group is the IEs a grouped IE, or a request, may hold, by type.
type group[T any] struct {
	name      string // as refusals say it: "Create PDR"
	fields    map[uint16]field[T]
	mandatory []uint16 // in the order a missing one is named
	// refused are IEs the spec puts here that the UPF does not act on:
	// each is refused, never accepted and ignored. Other IEs the table
	// does not name, unknown or unexpected here, are ignored (§7.6).
	refused []uint16
	// request: the group is a request, whose IEs the UPF does not act on
	// are refused with Service not supported rather than with Rule
	// creation/modification failure.
	request bool
}

// apply reads kids into v by the table. Every IE is read, so that what a
// refusal is addressed by (the Node ID) is known whatever comes before it;
// the first problem is the refusal:
//   - an IE of g.refused, which the UPF would not act on;
//   - a second copy of an IE that may occur once is Mandatory IE
//     incorrect, rather than one copy silently winning, and of one the
//     UPF takes only once of several, refused as not acted on;
//   - a field's *session.Error is the refusal as it is, any other error
//     of a field is Mandatory IE incorrect naming the IE;
//   - then a missing mandatory IE.
func (g *group[T]) apply(v *T, kids []*ie.IE) *session.Error {
	var seen typeSet
	var first *session.Error
	for _, k := range kids {
		var e *session.Error
		f, ok := g.fields[k.Type]
		switch {
		case !ok && slices.Contains(g.refused, k.Type):
			e = g.notActedOn(k.Type, "is not supported")
		case !ok:
			continue
		case f.repeat == once && seen.has(k.Type):
			e = incorrect(k.Type, "%s: IE %d may occur once, and occurs again", g.name, k.Type)
		case f.repeat == onlyOneHere && seen.has(k.Type):
			e = g.notActedOn(k.Type, "more than once is not supported")
		default:
			seen.add(k.Type)
			if err := f.read(v, k); err != nil {
				e = g.problem(k, err)
			}
		}
		if first == nil {
			first = e
		}
	}
	if first != nil {
		return first
	}
	for _, t := range g.mandatory {
		if !seen.has(t) {
			return missing(g.name, t)
		}
	}
	return nil
}

// notActedOn is the refusal of an IE the UPF does not act on.
func (g *group[T]) notActedOn(t uint16, why string) *session.Error {
	cause := session.CauseRuleFailure
	if g.request {
		cause = session.CauseServiceNotSupported
	}
	return &session.Error{Cause: cause, IE: t, Msg: fmt.Sprintf("%s: IE %d %s", g.name, t, why)}
}

// problem is the refusal for err, met reading k.
func (g *group[T]) problem(k *ie.IE, err error) *session.Error {
	var e *session.Error
	if errors.As(err, &e) {
		return e
	}
	return incorrect(k.Type, "%s: IE %d: %v", g.name, k.Type, err)
}

// grouped reads a grouped IE by g.
func grouped[T any](g *group[T], i *ie.IE) (T, *session.Error) {
	var v T
	kids, err := i.ValueAsGrouped()
	if err != nil {
		return v, incorrect(i.Type, "%s does not decode: %v", g.name, err)
	}
	return v, g.apply(&v, kids)
}

// typeSet holds IE types below 512, which covers every type a table
// names (the types of TS 29.244 Release 18 end below 400).
type typeSet [8]uint64

func (s *typeSet) add(t uint16) {
	if t < 512 {
		s[t/64] |= 1 << (t % 64)
	}
}

func (s *typeSet) has(t uint16) bool { return t < 512 && s[t/64]&(1<<(t%64)) != 0 }

// fields makes a table from pairs of IE types and fields.
func fields[T any](pairs ...fieldOf[T]) map[uint16]field[T] {
	m := make(map[uint16]field[T], len(pairs))
	for _, p := range pairs {
		m[p.t] = p.f
	}
	return m
}

type fieldOf[T any] struct {
	t uint16
	f field[T]
}

// one is an IE that may occur once, many one that may repeat, first one
// that may repeat of which the UPF acts on one.
func one[T any](t uint16, read func(v *T, k *ie.IE) error) fieldOf[T] {
	return fieldOf[T]{t, field[T]{read: read}}
}

func many[T any](t uint16, read func(v *T, k *ie.IE) error) fieldOf[T] {
	return fieldOf[T]{t, field[T]{read: read, repeat: several}}
}

func first[T any](t uint16, read func(v *T, k *ie.IE) error) fieldOf[T] {
	return fieldOf[T]{t, field[T]{read: read, repeat: onlyOneHere}}
}

// collect is a field that keeps the IEs of its type for a later step.
func collect[T any](list func(v *T) *[]*ie.IE) func(v *T, k *ie.IE) error {
	return func(v *T, k *ie.IE) error {
		l := list(v)
		*l = append(*l, k)
		return nil
	}
}

func missing(parent string, t uint16) *session.Error {
	return &session.Error{Cause: session.CauseMandatoryIEMissing, IE: t, Msg: fmt.Sprintf("%s: mandatory IE %d is missing", parent, t)}
}

func incorrect(t uint16, format string, args ...any) *session.Error {
	return &session.Error{Cause: session.CauseMandatoryIEIncorrect, IE: t, Msg: fmt.Sprintf(format, args...)}
}

func unsupported(t uint16, format string, args ...any) *session.Error {
	return &session.Error{Cause: session.CauseRuleFailure, IE: t, Msg: fmt.Sprintf(format, args...)}
}

// each decodes every IE of a list with one decoder.
func each[T any](ies []*ie.IE, dec func(*ie.IE) (T, *session.Error)) ([]T, *session.Error) {
	out := make([]T, 0, len(ies))
	for _, i := range ies {
		v, e := dec(i)
		if e != nil {
			return nil, e
		}
		out = append(out, v)
	}
	return out, nil
}

// fieldsOf runs one of go-pfcp's decoders of an IE's fields (the IE's
// type checked by the caller). Those read fields at offsets the IE's flags
// give, and go-pfcp v0.0.24 does not always check them against the IE's
// length: it panics (SDF Filter, Outer Header Creation), or, where the
// datagram goes on, reads the next IE's octets as its own. With the
// value's capacity cut to its length there are no such octets to read,
// and a panic is an error like any other.
func fieldsOf[T any](i *ie.IE, parse func([]byte) (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fields run past the IE's %d octets (%v)", len(i.Payload), r)
		}
	}()
	return parse(i.Payload[:len(i.Payload):len(i.Payload)])
}
