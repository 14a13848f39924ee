package probe

import (
	"encoding/binary"
	"net/netip"
)

// GTP-U as a gNB speaks it (TS 29.281 §5.1): a G-PDU with the E flag and
// one PDU Session Container extension header (TS 38.415 §5.5.2).
const (
	gtpuFlagsE      = 0x34 // version 1, protocol type GTP, E set
	gtpuGPDU        = 0xff
	extPDUSession   = 0x85
	pduTypeUL       = 1 // UL PDU SESSION INFORMATION, in the high nibble
	gtpuHeaderLen   = 8
	gtpuOptionalLen = 4
)

// ICMP over IPv4 (RFC 792).
const (
	protoICMP       = 1
	icmpEchoReply   = 0
	icmpEchoRequest = 8
	ipv4HeaderLen   = 20
	icmpHeaderLen   = 8
)

// uplinkGPDU wraps inner in a G-PDU on teid with the QoS flow qfi.
func uplinkGPDU(teid uint32, qfi uint8, inner []byte) []byte {
	g := make([]byte, 0, gtpuHeaderLen+gtpuOptionalLen+4+len(inner))
	g = append(g, gtpuFlagsE, gtpuGPDU, 0, 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(g[4:], teid)
	g = append(g, 0, 0, 0, extPDUSession)       // sequence number, N-PDU number (unused), next extension
	g = append(g, 1, pduTypeUL<<4, qfi&0x3f, 0) // length in 4-octet units, PDU type, QFI, no next extension
	g = append(g, inner...)
	binary.BigEndian.PutUint16(g[2:], uint16(len(g)-gtpuHeaderLen))
	return g
}

// echoRequest is an IPv4 ICMP Echo Request from src to dst carrying
// payload bytes of a counting pattern.
func echoRequest(src, dst netip.Addr, id, seq uint16, payload int) []byte {
	p := make([]byte, ipv4HeaderLen+icmpHeaderLen+payload)
	p[0], p[8], p[9] = 0x45, 64, protoICMP // version 4, 5 words of header; TTL; protocol
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	binary.BigEndian.PutUint16(p[4:], seq) // identification
	copy(p[12:16], src.AsSlice())
	copy(p[16:20], dst.AsSlice())
	binary.BigEndian.PutUint16(p[10:], checksum(p[:ipv4HeaderLen]))
	icmp := p[ipv4HeaderLen:]
	icmp[0] = icmpEchoRequest
	binary.BigEndian.PutUint16(icmp[4:], id)
	binary.BigEndian.PutUint16(icmp[6:], seq)
	for i := range payload {
		icmp[icmpHeaderLen+i] = byte(i)
	}
	binary.BigEndian.PutUint16(icmp[2:], checksum(icmp))
	return p
}

// echo is what identifies an Echo Reply.
type echo struct{ id, seq uint16 }

// parseReply reads a G-PDU on teid that carries an ICMP Echo Reply from
// target to ue; ok is false for anything else, malformed included.
func parseReply(b []byte, teid uint32, target, ue netip.Addr) (e echo, ok bool) {
	inner, ok := gpduPayload(b, teid)
	if !ok || len(inner) < ipv4HeaderLen || inner[0]>>4 != 4 || inner[9] != protoICMP {
		return e, false
	}
	ihl := int(inner[0]&0x0f) * 4
	src, _ := netip.AddrFromSlice(inner[12:16])
	dst, _ := netip.AddrFromSlice(inner[16:20])
	if ihl < ipv4HeaderLen || len(inner) < ihl+icmpHeaderLen || src != target || dst != ue {
		return e, false
	}
	icmp := inner[ihl:]
	if icmp[0] != icmpEchoReply || icmp[1] != 0 {
		return e, false
	}
	return echo{binary.BigEndian.Uint16(icmp[4:]), binary.BigEndian.Uint16(icmp[6:])}, true
}

// gpduPayload is the T-PDU of a G-PDU on teid, past the optional fields
// and every extension header (TS 29.281 §5.2).
func gpduPayload(b []byte, teid uint32) ([]byte, bool) {
	if len(b) < gtpuHeaderLen || b[0]>>5 != 1 || b[0]&0x10 == 0 || b[1] != gtpuGPDU || binary.BigEndian.Uint32(b[4:]) != teid {
		return nil, false
	}
	end := gtpuHeaderLen + int(binary.BigEndian.Uint16(b[2:]))
	if end > len(b) {
		return nil, false
	}
	b = b[:end]
	if b[0]&0x07 == 0 { // no optional fields
		return b[gtpuHeaderLen:], true
	}
	off := gtpuHeaderLen + gtpuOptionalLen
	if off > len(b) {
		return nil, false
	}
	next := b[off-1]
	if b[0]&0x04 == 0 { // E not set: the next extension header type is not meaningful
		next = 0
	}
	// Each extension header is at least 4 octets, so this ends within len(b)/4 steps.
	for next != 0 {
		if off >= len(b) || b[off] == 0 || off+4*int(b[off]) > len(b) {
			return nil, false
		}
		off += 4 * int(b[off])
		next = b[off-1]
	}
	return b[off:], true
}

// checksum is the Internet checksum (RFC 1071) of b.
func checksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}
