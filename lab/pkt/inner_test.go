package pkt

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

var (
	ueAddr = netip.MustParseAddr("10.45.0.2")
	dnAddr = netip.MustParseAddr("198.18.7.10")
)

func TestUplinkGPDU(t *testing.T) {
	inner := ICMPEcho(ueAddr, dnAddr, 0x1234, 7, 4)
	g := UplinkGPDU(0x100, 9, inner)
	want := []byte{
		0x34, 0xff, 0, byte(8 + len(inner)), 0, 0, 1, 0, // E set, G-PDU, length, TEID 0x100
		0, 0, 0, 0x85, // no sequence number or N-PDU number; a PDU Session Container follows
		1, 0x10, 9, 0, // 4 octets, UL PDU SESSION INFORMATION, QFI 9, no more extensions
	}
	if !bytes.Equal(g[:16], want) || !bytes.Equal(g[16:], inner) {
		t.Errorf("G-PDU\n% x\nwant\n% x then the inner packet", g, want)
	}
	teid, got, ok := GPDUPayload(g)
	if !ok || teid != 0x100 || !bytes.Equal(got, inner) {
		t.Errorf("read back: TEID %#x, %v, % x; want 0x100 and the inner packet", teid, ok, got)
	}
	if _, _, ok := GPDUPayload(g[:20]); ok {
		t.Error("a G-PDU cut short reads as whole")
	}
}

// The inner packets decode with gopacket, an independent decoder, to what
// was asked, their checksums right.
func TestInnerPacketsDecode(t *testing.T) {
	ue, dn := netip.AddrPortFrom(ueAddr, 40000), netip.AddrPortFrom(dnAddr, 8080)
	for _, c := range []struct {
		name   string
		packet []byte
		check  func(t *testing.T, p gopacket.Packet)
	}{
		{"ICMP echo request", ICMPEcho(ueAddr, dnAddr, 0x1234, 7, 56), func(t *testing.T, p gopacket.Packet) {
			icmp, ok := p.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
			if !ok || icmp.TypeCode.Type() != layers.ICMPv4TypeEchoRequest || icmp.Id != 0x1234 || icmp.Seq != 7 || len(icmp.Payload) != 56 {
				t.Errorf("ICMP %+v: want an echo request, id 0x1234, seq 7, 56 bytes", icmp)
			}
			if ok && Checksum(p.NetworkLayer().LayerPayload(), 0) != 0 {
				t.Error("the ICMP checksum does not verify")
			}
		}},
		{"TCP SYN", TCPSYN(ue, dn), func(t *testing.T, p gopacket.Packet) {
			tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
			if !ok || !tcp.SYN || tcp.ACK || tcp.SrcPort != 40000 || tcp.DstPort != 8080 {
				t.Fatalf("TCP %+v: want a SYN from port 40000 to 8080", tcp)
			}
			tcp.SetNetworkLayerForChecksum(p.NetworkLayer())
			if err, r := tcp.VerifyChecksum(); err != nil || !r.Valid {
				t.Errorf("TCP checksum %#04x, want %#04x", tcp.Checksum, r.Correct)
			}
		}},
		{"UDP", UDPPacket(ue, dn, []byte("thirteen byte")), func(t *testing.T, p gopacket.Packet) {
			udp, ok := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
			if !ok || udp.SrcPort != 40000 || udp.DstPort != 8080 || string(udp.Payload) != "thirteen byte" {
				t.Errorf("UDP %+v: want 13 bytes from port 40000 to 8080", udp)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := gopacket.NewPacket(c.packet, layers.LayerTypeIPv4, gopacket.Default)
			if el := p.ErrorLayer(); el != nil {
				t.Fatal(el.Error())
			}
			ip := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
			if err, r := ip.VerifyChecksum(); err != nil || !r.Valid || int(ip.Length) != len(c.packet) ||
				!bytes.Equal(ip.SrcIP.To4(), ueAddr.AsSlice()) || !bytes.Equal(ip.DstIP.To4(), dnAddr.AsSlice()) {
				t.Errorf("IPv4 %+v: want %s to %s, length %d, checksum right", ip, ueAddr, dnAddr, len(c.packet))
			}
			c.check(t, p)
		})
	}
}

// An End Marker is told from a G-PDU and gives its TEID; anything else is
// no End Marker.
func TestEndMarkerTEID(t *testing.T) {
	em := []byte{0x30, 0xfe, 0, 0, 0x12, 0x34, 0x56, 0x78} // TS 29.281 §7.3.2: no payload
	if teid, ok := EndMarkerTEID(em); !ok || teid != 0x12345678 {
		t.Errorf("End Marker: TEID %#x, %v; want 0x12345678, true", teid, ok)
	}
	for name, b := range map[string][]byte{
		"G-PDU":     UplinkGPDU(0x12345678, 9, ICMPEcho(ueAddr, dnAddr, 1, 1, 4)),
		"short":     em[:7],
		"version 2": {0x50, 0xfe, 0, 0, 0, 0, 0, 1},
	} {
		if _, ok := EndMarkerTEID(b); ok {
			t.Errorf("%s taken for an End Marker", name)
		}
	}
}
