package probe

import (
	"encoding/binary"
	"net/netip"

	"github.com/sluice-upf/sluice/lab/pkt"
)

// An echo reply as a UPF sends it to the gNB, as far as it is read; the
// requests and the G-PDUs are lab/pkt's.
const (
	ipv4HeaderLen = pkt.IPv4Len
	icmpHeaderLen = pkt.ICMPLen
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

// gpduPayload is the T-PDU of a G-PDU on teid.
func gpduPayload(b []byte, teid uint32) ([]byte, bool) {
	t, inner, ok := pkt.GPDUPayload(b)
	return inner, ok && t == teid
}
