// Package testpkt builds frames for tests with gopacket, an encoder
// independent of the programs under test, so that the bytes a test expects
// do not share their mistakes.
package testpkt

import (
	"net"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Tunnel is a GTP-U message's outside: IPv4, UDP from and to port 2152,
// GTP-U.
type Tunnel struct {
	Src, Dst netip.Addr
	TEID     uint32
	MsgType  uint8 // 0: G-PDU
	Seq      *uint16
	Exts     []layers.GTPExtensionHeader // before the PDU Session Container
	PSC      bool                        // a PDU Session Container
	PDUType  uint8                       // its PDU type: 0 DL, 1 UL (TS 38.415 §5.5.2)
	QFI      uint8
}

// Layers are tn's headers in front of inner.
func (tn Tunnel) Layers(inner []gopacket.SerializableLayer) []gopacket.SerializableLayer {
	ip := &layers.IPv4{Version: 4, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolUDP,
		SrcIP: tn.Src.AsSlice(), DstIP: tn.Dst.AsSlice()}
	udp := &layers.UDP{SrcPort: 2152, DstPort: 2152}
	udp.SetNetworkLayerForChecksum(ip)
	g := &layers.GTPv1U{Version: 1, ProtocolType: 1, MessageType: 255, TEID: tn.TEID}
	if tn.MsgType != 0 {
		g.MessageType = tn.MsgType
	}
	if tn.Seq != nil {
		g.SequenceNumberFlag, g.SequenceNumber = true, *tn.Seq
	}
	g.GTPExtensionHeaders = append(g.GTPExtensionHeaders, tn.Exts...)
	if tn.PSC {
		g.GTPExtensionHeaders = append(g.GTPExtensionHeaders,
			layers.GTPExtensionHeader{Type: 0x85, Content: []byte{tn.PDUType << 4, tn.QFI}})
	}
	return append([]gopacket.SerializableLayer{ip, udp, g}, inner...)
}

// Serialize is ls with their lengths and checksums filled in.
func Serialize(ls ...gopacket.SerializableLayer) []byte {
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// Frame is ls in Ethernet, the EtherType by the first layer.
func Frame(dst, src net.HardwareAddr, ls []gopacket.SerializableLayer) []byte {
	et := layers.EthernetTypeIPv4
	if _, ok := ls[0].(*layers.IPv6); ok {
		et = layers.EthernetTypeIPv6
	}
	return Serialize(append([]gopacket.SerializableLayer{&layers.Ethernet{DstMAC: dst, SrcMAC: src, EthernetType: et}}, ls...)...)
}
