// Package pkt builds the frames the lab sends: a UDP datagram over IPv4 or
// IPv6 in an Ethernet frame, on N3 inside a G-PDU (TS 29.281 §5) with a
// PDU Session Container (TS 38.415 §5.5.2).
//
// Lengths and checksums are filled in. The UDP checksum is 0 over IPv4
// (RFC 768 allows it, and the generator sends it so) and computed over
// IPv6, where it is required (RFC 8200 §8.1).
package pkt

import (
	"encoding/binary"
	"net"
	"net/netip"
)

// Header lengths.
const (
	EthLen  = 14
	IPv4Len = 20
	IPv6Len = 40
	UDPLen  = 8
	// GTPULen is a G-PDU's header as the lab sends it: 8 mandatory octets,
	// 4 optional ones and a 4-octet PDU Session Container.
	GTPULen = 16
)

// GTPUPort is GTP-U's UDP port (TS 29.281 §4.4.2.3).
const GTPUPort = 2152

// Tunnel is the outer part of a G-PDU.
type Tunnel struct {
	Src, Dst netip.Addr
	TEID     uint32
	QFI      uint8
	Uplink   bool // UL PDU SESSION INFORMATION, else DL
}

// Frame is a UDP datagram in an Ethernet frame, in a G-PDU if Tunnel is set.
type Frame struct {
	Dst, Src net.HardwareAddr
	Tunnel   *Tunnel
	From, To netip.AddrPort // the datagram's ends; both of one family
	Payload  []byte
}

// Layout says where a frame's headers start.
type Layout struct {
	Outer   int // the G-PDU's IP header; 0 if not tunnelled
	Inner   int // the datagram's IP header
	UDP     int
	Payload int
}

func ipLen(a netip.Addr) int {
	if a.Is4() {
		return IPv4Len
	}
	return IPv6Len
}

// Layout of f's bytes.
func (f Frame) Layout() Layout {
	l := Layout{Inner: EthLen}
	if f.Tunnel != nil {
		l.Outer = EthLen
		l.Inner = EthLen + ipLen(f.Tunnel.Src) + UDPLen + GTPULen
	}
	l.UDP = l.Inner + ipLen(f.From.Addr())
	l.Payload = l.UDP + UDPLen
	return l
}

// Bytes encodes f.
func (f Frame) Bytes() []byte {
	l := f.Layout()
	b := make([]byte, l.Payload+len(f.Payload))
	copy(b, f.Dst)
	copy(b[6:], f.Src)
	first := f.From.Addr()
	if f.Tunnel != nil {
		first = f.Tunnel.Src
	}
	binary.BigEndian.PutUint16(b[12:], etherType(first))
	copy(b[l.Payload:], f.Payload)
	udp(b[l.Inner:], f.From, f.To)
	if t := f.Tunnel; t != nil {
		gtp := b[l.Inner-GTPULen:]
		gtp[0] = 0x34 // version 1, PT 1, E: an extension header follows
		gtp[1] = 255  // G-PDU
		binary.BigEndian.PutUint16(gtp[2:], uint16(len(b)-l.Inner+8))
		binary.BigEndian.PutUint32(gtp[4:], t.TEID)
		gtp[11] = 0x85 // next: PDU Session Container
		gtp[12] = 1    // its length in 4-octet units
		if t.Uplink {
			gtp[13] = 1 << 4
		}
		gtp[14] = t.QFI & 0x3f
		udp(b[l.Outer:], netip.AddrPortFrom(t.Src, GTPUPort), netip.AddrPortFrom(t.Dst, GTPUPort))
	}
	return b
}

func etherType(a netip.Addr) uint16 {
	if a.Is4() {
		return 0x0800
	}
	return 0x86dd
}

// udp writes the IP and UDP headers of the datagram from src to dst that
// fills b.
func udp(b []byte, src, dst netip.AddrPort) {
	n := ipLen(src.Addr())
	u := b[n:]
	binary.BigEndian.PutUint16(u[0:], src.Port())
	binary.BigEndian.PutUint16(u[2:], dst.Port())
	binary.BigEndian.PutUint16(u[4:], uint16(len(u)))
	binary.BigEndian.PutUint16(u[6:], 0)
	s, d := src.Addr().AsSlice(), dst.Addr().AsSlice()
	if src.Addr().Is4() {
		b[0], b[8], b[9] = 0x45, 64, 17 // version, IHL; TTL; UDP
		binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
		binary.BigEndian.PutUint16(b[6:], 0x4000) // DF
		copy(b[12:], s)
		copy(b[16:], d)
		binary.BigEndian.PutUint16(b[10:], Checksum(b[:IPv4Len], 0))
		return
	}
	b[0], b[6], b[7] = 0x60, 17, 64 // version; UDP; hop limit
	binary.BigEndian.PutUint16(b[4:], uint16(len(u)))
	copy(b[8:], s)
	copy(b[24:], d)
	pseudo := Sum(s) + Sum(d) + uint32(len(u)) + 17
	c := Checksum(u, pseudo)
	if c == 0 {
		c = 0xffff // 0 means none, which IPv6 forbids
	}
	binary.BigEndian.PutUint16(u[6:], c)
}

// Sum is the one's complement sum of b as 16-bit big-endian words, odd
// length padded with a zero (RFC 1071), not yet folded.
func Sum(b []byte) uint32 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	return s
}

// Checksum is the Internet checksum of b, starting from a partial sum.
func Checksum(b []byte, initial uint32) uint16 {
	s := uint64(initial) + uint64(Sum(b))
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}
