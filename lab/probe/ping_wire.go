package probe

import (
	"encoding/binary"
	"net/netip"

	"github.com/sluice-upf/sluice/lab/pkt"
)

// GTP-U as a UPF sends it to the gNB (TS 29.281 §5.1), as far as a reply
// is read: the echo requests are lab/pkt's.
const (
	gtpuGPDU        = 0xff
	gtpuHeaderLen   = 8
	gtpuOptionalLen = 4
	ipv4HeaderLen   = pkt.IPv4Len
	icmpHeaderLen   = pkt.ICMPLen
)

// echo is what identifies an Echo Reply.
type echo struct{ id, seq uint16 }

// parseReply reads a G-PDU on teid that carries an ICMP Echo Reply from
// target to ue; ok is false for anything else, malformed included.
func parseReply(b []byte, teid uint32, target, ue netip.Addr) (e echo, ok bool) {
	inner, ok := gpduPayload(b, teid)
	if !ok || len(inner) < ipv4HeaderLen || inner[0]>>4 != 4 || inner[9] != pkt.ProtoICMP {
		return e, false
	}
	ihl := int(inner[0]&0x0f) * 4
	src, _ := netip.AddrFromSlice(inner[12:16])
	dst, _ := netip.AddrFromSlice(inner[16:20])
	if ihl < ipv4HeaderLen || len(inner) < ihl+icmpHeaderLen || src != target || dst != ue {
		return e, false
	}
	icmp := inner[ihl:]
	if icmp[0] != pkt.ICMPEchoReply || icmp[1] != 0 {
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
