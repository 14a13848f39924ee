package decode

import (
	"encoding/binary"
	"fmt"

	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/internal/session"
)

// go-pfcp says that a message does not decode, not which IE is at fault,
// and it panics on some malformed IEs instead of saying so. What is here
// finds the IE, so that every refusal of a malformed request names it as
// the Offending IE (§8.2.22).

// ParseRefusal is the refusal of a request go-pfcp could not parse, given
// the IEs of the message (the header's payload). go-pfcp fails to parse
// only where an IE's Length disagrees with what holds it, which is Invalid
// length (§8.2.1) with that IE as the offending one.
func ParseRefusal(payload []byte, err error) *session.Error {
	if e := badLength(payload, 0); e != nil {
		return e
	}
	return &session.Error{Cause: session.CauseMandatoryIEIncorrect, Msg: fmt.Sprintf("request does not decode: %v", err)}
}

// badLength walks the IEs of b as §8.1.1 frames them (Type, Length, an
// Enterprise ID for vendor-specific types, the value), into grouped IEs
// too, and names the first IE whose Length runs past the end of what
// holds it: the message, or the grouped IE it is in (parent, 0 for the
// message). The innermost IE at fault is named, as for a missing IE.
func badLength(b []byte, parent uint16) *session.Error {
	for len(b) > 0 {
		if len(b) < 4 { // not even a Type and a Length
			t := parent
			if len(b) >= 2 {
				t = binary.BigEndian.Uint16(b)
			}
			return invalidLength(t, "%d octets left after the last IE, too few for another", len(b))
		}
		t, n := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		if 4+n > len(b) {
			return invalidLength(t, "IE %d says %d octets, %d are left", t, n, len(b)-4)
		}
		value := b[4 : 4+n]
		if t&0x8000 != 0 { // vendor-specific: the Enterprise ID comes first
			if n < 2 {
				return invalidLength(t, "vendor-specific IE %d of %d octets has no room for its Enterprise ID", t, n)
			}
			value = value[2:]
		}
		if isGrouped(t) {
			if e := badLength(value, t); e != nil {
				return e
			}
		}
		b = b[4+n:]
	}
	return nil
}

// lengthFirst is the refusal of a request whose content did not decode:
// the IE whose Length runs past what holds it, if there is one, else e.
// go-pfcp reads an IE of which only the Type and Length are left, at the
// end of the message or of a grouped IE, as an empty IE, so a decoder
// finds it wrong or missing where its Length is at fault. The walk is
// done only for a refusal: an accepted request pays nothing for it.
func lengthFirst(payload []byte, e *session.Error) *session.Error {
	if l := badLength(payload, 0); l != nil {
		return l
	}
	return e
}

func invalidLength(t uint16, format string, args ...any) *session.Error {
	return &session.Error{Cause: session.CauseInvalidLength, IE: t, Msg: fmt.Sprintf(format, args...)}
}

// isGrouped is go-pfcp's answer (the table codec.go builds), so that the
// walk descends where go-pfcp does.
func isGrouped(t uint16) bool { return (&ie.IE{Type: t}).IsGrouped() }
