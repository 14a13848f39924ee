package pkt

import (
	"encoding/binary"
	"net/netip"
)

// The packets a UE sends, for the probes that write G-PDUs themselves
// (lab/probe, upflab verify's isolation check): IPv4 only, every length
// and checksum filled in.

// IP protocols and ICMP types (RFC 792).
const (
	ProtoICMP       = 1
	ProtoTCP        = 6
	ProtoUDP        = 17
	ICMPEchoReply   = 0
	ICMPEchoRequest = 8
	ICMPLen         = 8
	TCPLen          = 20
)

// ICMPEcho is an IPv4 ICMP Echo Request from src to dst with payload
// bytes of a counting pattern.
func ICMPEcho(src, dst netip.Addr, id, seq uint16, payload int) []byte {
	p := ipv4(src, dst, ProtoICMP, seq, ICMPLen+payload)
	icmp := p[IPv4Len:]
	icmp[0] = ICMPEchoRequest
	binary.BigEndian.PutUint16(icmp[4:], id)
	binary.BigEndian.PutUint16(icmp[6:], seq)
	for i := range payload {
		icmp[ICMPLen+i] = byte(i)
	}
	binary.BigEndian.PutUint16(icmp[2:], Checksum(icmp, 0))
	return p
}

// TCPSYN is an IPv4 TCP segment from src to dst that opens a connection.
func TCPSYN(src, dst netip.AddrPort) []byte {
	p := ipv4(src.Addr(), dst.Addr(), ProtoTCP, 0, TCPLen)
	tcp := p[IPv4Len:]
	binary.BigEndian.PutUint16(tcp[0:], src.Port())
	binary.BigEndian.PutUint16(tcp[2:], dst.Port())
	binary.BigEndian.PutUint32(tcp[4:], 1) // sequence number
	tcp[12] = TCPLen / 4 << 4              // data offset
	tcp[13] = 0x02                         // SYN
	binary.BigEndian.PutUint16(tcp[14:], 64240)
	pseudo := Sum(src.Addr().AsSlice()) + Sum(dst.Addr().AsSlice()) + ProtoTCP + TCPLen
	binary.BigEndian.PutUint16(tcp[16:], Checksum(tcp, pseudo))
	return p
}

// UDPPacket is the IP packet of a UDP datagram from src to dst.
func UDPPacket(src, dst netip.AddrPort, payload []byte) []byte {
	return Frame{From: src, To: dst, Payload: payload}.Bytes()[EthLen:]
}

// ipv4 is an IPv4 header from src to dst carrying proto, with room for
// rest bytes after it; id is its identification.
func ipv4(src, dst netip.Addr, proto uint8, id uint16, rest int) []byte {
	p := make([]byte, IPv4Len+rest)
	p[0], p[8], p[9] = 0x45, 64, proto // version 4, 5 words of header; TTL; protocol
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	binary.BigEndian.PutUint16(p[4:], id)
	copy(p[12:16], src.AsSlice())
	copy(p[16:20], dst.AsSlice())
	binary.BigEndian.PutUint16(p[10:], Checksum(p[:IPv4Len], 0))
	return p
}

// GTP-U as a gNB speaks it (TS 29.281 §5.1): a G-PDU with the E flag and
// one PDU Session Container (TS 38.415 §5.5.2).
const (
	gtpuFlagsE    = 0x34 // version 1, protocol type GTP, E set
	gtpuGPDU      = 0xff
	gtpuEndMarker = 0xfe
	extPDUSession = 0x85
	pduTypeUL     = 1 // UL PDU SESSION INFORMATION, in the high nibble
)

// UplinkGPDU wraps inner in a G-PDU on teid with the QoS flow qfi: what a
// gNB sends to UDP port 2152 of the UPF.
func UplinkGPDU(teid uint32, qfi uint8, inner []byte) []byte {
	g := make([]byte, 0, GTPULen+len(inner))
	g = append(g, gtpuFlagsE, gtpuGPDU, 0, 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(g[4:], teid)
	g = append(g, 0, 0, 0, extPDUSession)       // sequence number, N-PDU number (unused), next extension
	g = append(g, 1, pduTypeUL<<4, qfi&0x3f, 0) // length in 4-octet units, PDU type, QFI, no next extension
	g = append(g, inner...)
	binary.BigEndian.PutUint16(g[2:], uint16(len(g)-8))
	return g
}

// GTP-U header lengths (TS 29.281 §5.1): the mandatory part, and the
// optional fields that any of the E, S and PN flags bring.
const (
	gtpuMandatory = 8
	gtpuOptional  = 4
)

// GPDUPayload reads a G-PDU: its TEID and its T-PDU, past the optional
// fields and every extension header (TS 29.281 §5.2); ok is false for
// anything else, malformed included.
func GPDUPayload(b []byte) (teid uint32, inner []byte, ok bool) {
	if len(b) < gtpuMandatory || b[0]>>5 != 1 || b[0]&0x10 == 0 || b[1] != gtpuGPDU {
		return 0, nil, false
	}
	teid = binary.BigEndian.Uint32(b[4:])
	end := gtpuMandatory + int(binary.BigEndian.Uint16(b[2:]))
	if end > len(b) {
		return 0, nil, false
	}
	b = b[:end]
	if b[0]&0x07 == 0 { // no optional fields
		return teid, b[gtpuMandatory:], true
	}
	off := gtpuMandatory + gtpuOptional
	if off > len(b) {
		return 0, nil, false
	}
	next := b[off-1]
	if b[0]&0x04 == 0 { // E not set: the next extension header type is not meaningful
		next = 0
	}
	// Each extension header is at least 4 octets, so this ends within len(b)/4 steps.
	for next != 0 {
		if off >= len(b) || b[off] == 0 || off+4*int(b[off]) > len(b) {
			return 0, nil, false
		}
		off += 4 * int(b[off])
		next = b[off-1]
	}
	return teid, b[off:], true
}

// EndMarkerTEID reads an End Marker (TS 29.281 §7.3.2): the TEID of the
// tunnel it ends; ok is false for anything else.
func EndMarkerTEID(b []byte) (teid uint32, ok bool) {
	if len(b) < gtpuMandatory || b[0]>>5 != 1 || b[0]&0x10 == 0 || b[1] != gtpuEndMarker {
		return 0, false
	}
	return binary.BigEndian.Uint32(b[4:]), true
}
