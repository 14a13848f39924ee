package datapath

import (
	"encoding/binary"
	"net"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Frames for the fixtures are built with gopacket, an encoder independent of
// the datapath, so the expected bytes do not share the datapath's mistakes.

// flow is an inner packet: UDP (or proto) from src to dst.
type flow struct {
	src, dst     netip.Addr
	sport, dport uint16
	proto        layers.IPProtocol // 0 = UDP
	ttl          uint8             // 0 = 64
	tos          uint8
	payload      int // bytes of UDP payload
}

func (f flow) layers() []gopacket.SerializableLayer {
	ttl := f.ttl
	if ttl == 0 {
		ttl = 64
	}
	proto := f.proto
	if proto == 0 {
		proto = layers.IPProtocolUDP
	}
	payload := make([]byte, f.payload)
	for i := range payload {
		payload[i] = byte(i)
	}
	var ip gopacket.NetworkLayer
	var ls []gopacket.SerializableLayer
	if f.src.Is4() {
		v4 := &layers.IPv4{Version: 4, TTL: ttl, TOS: f.tos, Protocol: proto, SrcIP: f.src.AsSlice(), DstIP: f.dst.AsSlice()}
		ip, ls = v4, append(ls, v4)
	} else {
		v6 := &layers.IPv6{Version: 6, HopLimit: ttl, TrafficClass: f.tos, NextHeader: proto, SrcIP: f.src.AsSlice(), DstIP: f.dst.AsSlice()}
		ip, ls = v6, append(ls, v6)
	}
	switch proto {
	case layers.IPProtocolUDP:
		udp := &layers.UDP{SrcPort: layers.UDPPort(f.sport), DstPort: layers.UDPPort(f.dport)}
		udp.SetNetworkLayerForChecksum(ip)
		ls = append(ls, udp)
	case layers.IPProtocolTCP:
		tcp := &layers.TCP{SrcPort: layers.TCPPort(f.sport), DstPort: layers.TCPPort(f.dport), Window: 1024, SYN: true}
		tcp.SetNetworkLayerForChecksum(ip)
		ls = append(ls, tcp)
	}
	return append(ls, gopacket.Payload(payload))
}

func serialize(ls ...gopacket.SerializableLayer) []byte {
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func eth(dst, src net.HardwareAddr, v6 bool) *layers.Ethernet {
	t := layers.EthernetTypeIPv4
	if v6 {
		t = layers.EthernetTypeIPv6
	}
	return &layers.Ethernet{DstMAC: dst, SrcMAC: src, EthernetType: t}
}

// ipFrame is a plain IP frame (N6 in, or uplink out).
func ipFrame(dst, src net.HardwareAddr, f flow) []byte {
	return serialize(append([]gopacket.SerializableLayer{eth(dst, src, f.src.Is6())}, f.layers()...)...)
}

// tunnel is the outer part of a G-PDU.
type tunnel struct {
	src, dst netip.Addr
	teid     uint32
	qfi      uint8 // > 0: a PDU Session Container
	pduType  uint8 // 0 downlink, 1 uplink
	rqi      bool
	seq      *uint16                     // S flag with this sequence number
	exts     []layers.GTPExtensionHeader // before the PDU Session Container
	msgType  uint8                       // 0 = G-PDU
	ttl      uint8                       // 0 = 64
	df       bool
	zeroUDP  bool // IPv4: checksum 0, as the datapath sends
	sport    uint16
}

func (tn tunnel) gtp() *layers.GTPv1U {
	g := &layers.GTPv1U{Version: 1, ProtocolType: 1, MessageType: 255, TEID: tn.teid}
	if tn.msgType != 0 {
		g.MessageType = tn.msgType
	}
	if tn.seq != nil {
		g.SequenceNumberFlag = true
		g.SequenceNumber = *tn.seq
	}
	g.GTPExtensionHeaders = append(g.GTPExtensionHeaders, tn.exts...)
	if tn.qfi > 0 {
		b1 := tn.qfi
		if tn.rqi {
			b1 |= 0x40
		}
		g.GTPExtensionHeaders = append(g.GTPExtensionHeaders,
			layers.GTPExtensionHeader{Type: 0x85, Content: []byte{tn.pduType << 4, b1}})
	}
	return g
}

// gtpuFrame is a GTP-U frame carrying inner (nil: no payload).
func gtpuFrame(dst, src net.HardwareAddr, tn tunnel, inner []gopacket.SerializableLayer) []byte {
	ttl := tn.ttl
	if ttl == 0 {
		ttl = 64
	}
	sport := tn.sport
	if sport == 0 {
		sport = 2152
	}
	var ip gopacket.NetworkLayer
	ls := []gopacket.SerializableLayer{eth(dst, src, tn.src.Is6())}
	if tn.src.Is4() {
		v4 := &layers.IPv4{Version: 4, TTL: ttl, Protocol: layers.IPProtocolUDP, SrcIP: tn.src.AsSlice(), DstIP: tn.dst.AsSlice()}
		if tn.df {
			v4.Flags = layers.IPv4DontFragment
		}
		ip, ls = v4, append(ls, v4)
	} else {
		v6 := &layers.IPv6{Version: 6, HopLimit: ttl, NextHeader: layers.IPProtocolUDP, SrcIP: tn.src.AsSlice(), DstIP: tn.dst.AsSlice()}
		ip, ls = v6, append(ls, v6)
	}
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: 2152}
	udp.SetNetworkLayerForChecksum(ip)
	ls = append(ls, udp, tn.gtp())
	b := serialize(append(ls, inner...)...)
	if tn.zeroUDP && tn.src.Is4() {
		binary.BigEndian.PutUint16(b[14+20+6:], 0)
	}
	return b
}

// encapOut is what the datapath sends toward a gNB: DF, TTL 64, UDP from
// and to 2152, checksum 0 over IPv4.
func encapOut(dstMAC, srcMAC net.HardwareAddr, from, to netip.Addr, teid uint32, qfi uint8, inner flow) []byte {
	inner = routed(inner)
	return gtpuFrame(dstMAC, srcMAC, tunnel{src: from, dst: to, teid: teid, qfi: qfi, df: true, zeroUDP: true}, inner.layers())
}

// decapOut is an uplink packet as it leaves on N6: TTL one less.
func decapOut(inner flow) []byte {
	return ipFrame(macRouter, macN6, routed(inner))
}

// routed is the flow one hop later.
func routed(f flow) flow {
	if f.ttl == 0 {
		f.ttl = 64
	}
	f.ttl--
	return f
}

func u16p(v uint16) *uint16 { return &v }
