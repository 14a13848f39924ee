package gtpu

import (
	"encoding/binary"
	"net/netip"
)

// Message types (TS 29.281 §6.1).
const (
	typeEchoRequest     = 1
	typeEchoResponse    = 2
	typeErrorIndication = 26
	typeSupportedExtHdr = 31 // Supported Extension Headers Notification
	typeEndMarker       = 254
)

// Information elements (TS 29.281 §8).
const (
	ieTEIDDataI   = 16  // TV, 4 octets
	iePeerAddress = 133 // TLV, an IPv4 or IPv6 address
	ieExtHdrTypes = 141 // Extension Header Type List: one octet of length (TS 29.060 §7.7.40)
)

// extPDUSessionContainer is the one extension header whose comprehension
// is required that we comprehend (TS 29.281 §5.2.2).
const extPDUSessionContainer = 0x85

// endMarker is a header with no payload and no sequence number.
func endMarker(teid uint32) []byte {
	b := []byte{0x30, typeEndMarker, 0, 0, 0, 0, 0, 0} // version 1, PT 1, length 0
	binary.BigEndian.PutUint32(b[4:], teid)
	return b
}

// echoRequest is TEID 0 with a sequence number, nothing else.
func echoRequest(seq uint16) []byte {
	b := []byte{0x32, typeEchoRequest, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0} // S set: 4 octets of optional fields
	binary.BigEndian.PutUint16(b[8:], seq)
	return b
}

// errorIndication carries TEID Data I and the GTP-U Peer Address: the
// address the G-PDU was sent to.
func errorIndication(seq uint16, teid uint32, local netip.Addr) []byte {
	addr := local.AsSlice()
	b := []byte{0x32, typeErrorIndication, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ieTEIDDataI, 0, 0, 0, 0, iePeerAddress, 0, byte(len(addr))}
	binary.BigEndian.PutUint16(b[8:], seq)
	binary.BigEndian.PutUint32(b[13:], teid)
	b = append(b, addr...)
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)-8))
	return b
}

// supportedExtHeaders lists the extension headers we comprehend.
func supportedExtHeaders(seq uint16) []byte {
	b := []byte{0x32, typeSupportedExtHdr, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, ieExtHdrTypes, 1, extPDUSessionContainer}
	binary.BigEndian.PutUint16(b[8:], seq)
	return b
}

// parse reads an Echo Response or an Error Indication; ok is false for
// anything else or anything malformed.
func parse(b []byte) (r Received, ok bool) {
	if len(b) < 8 || b[0]>>5 != 1 || int(binary.BigEndian.Uint16(b[2:]))+8 > len(b) {
		return r, false
	}
	b = b[:8+binary.BigEndian.Uint16(b[2:])]
	switch b[1] {
	case typeEchoResponse: // its sequence number is the request's (§5.1): S is set
		if b[0]&0x02 == 0 || len(b) < 12 {
			return r, false
		}
		r.Seq = binary.BigEndian.Uint16(b[8:])
		return r, true
	case typeErrorIndication:
	default:
		return r, false
	}
	if b[0]&0x07 == 0 || len(b) < 12 { // the optional fields are there (S is set)
		return r, false
	}
	ies := b[12:]
	if b[0]&0x04 != 0 { // extension headers: skip them
		for next := b[11]; next != 0; {
			if len(ies) < 4 || ies[0] == 0 || len(ies) < 4*int(ies[0]) {
				return r, false
			}
			l := 4 * int(ies[0])
			next, ies = ies[l-1], ies[l:]
		}
	}
	var haveTEID, havePeer bool
	for len(ies) > 0 {
		switch ies[0] {
		case ieTEIDDataI:
			if len(ies) < 5 {
				return r, false
			}
			r.TEID, haveTEID, ies = binary.BigEndian.Uint32(ies[1:]), true, ies[5:]
		case iePeerAddress:
			if len(ies) < 3 || len(ies) < 3+int(binary.BigEndian.Uint16(ies[1:])) {
				return r, false
			}
			l := int(binary.BigEndian.Uint16(ies[1:]))
			r.Peer, havePeer = netip.AddrFromSlice(ies[3 : 3+l])
			r.Peer, ies = r.Peer.Unmap(), ies[3+l:]
		default:
			ies = nil // private extension or unknown: nothing we need follows
		}
	}
	r.ErrorIndication = true
	return r, haveTEID && havePeer
}
