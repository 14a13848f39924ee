package pkt

import (
	"net"
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Frames decode with gopacket, an independent decoder, to what was asked,
// with every length and checksum right.
func TestFrameDecodes(t *testing.T) {
	mac := net.HardwareAddr{2, 0, 0, 0, 3, 1}
	ue4, dn4 := netip.MustParseAddrPort("10.45.0.2:10000"), netip.MustParseAddrPort("198.18.7.10:9")
	ue6, dn6 := netip.MustParseAddrPort("[2001:db8:45::2]:10000"), netip.MustParseAddrPort("[2001:2:0:7::10]:9")
	for _, c := range []struct {
		name  string
		frame Frame
	}{
		{"IPv4", Frame{From: dn4, To: ue4}},
		{"IPv6", Frame{From: dn6, To: ue6}},
		{"IPv4 in an IPv4 G-PDU, uplink", Frame{From: ue4, To: dn4, Tunnel: &Tunnel{
			Src: netip.MustParseAddr("198.18.3.1"), Dst: netip.MustParseAddr("198.18.3.2"), TEID: 0x12345, QFI: 9, Uplink: true}}},
		{"IPv6 in an IPv6 G-PDU, downlink", Frame{From: dn6, To: ue6, Tunnel: &Tunnel{
			Src: netip.MustParseAddr("2001:2:0:3::2"), Dst: netip.MustParseAddr("2001:2:0:3::1"), TEID: 7, QFI: 63}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.frame
			f.Dst, f.Src, f.Payload = mac, mac, []byte("thirteen byte")
			p := gopacket.NewPacket(f.Bytes(), layers.LayerTypeEthernet, gopacket.Default)
			if el := p.ErrorLayer(); el != nil {
				t.Fatal(el.Error())
			}
			var ips []gopacket.NetworkLayer
			var udps []*layers.UDP
			for _, l := range p.Layers() {
				switch l := l.(type) {
				case *layers.IPv4:
					if err, r := l.VerifyChecksum(); err != nil || !r.Valid {
						t.Errorf("IPv4 checksum %#04x, want %#04x", l.Checksum, r.Correct)
					}
					ips = append(ips, l)
				case *layers.IPv6:
					ips = append(ips, l)
				case *layers.UDP:
					l.SetNetworkLayerForChecksum(ips[len(ips)-1])
					if err, r := l.VerifyChecksum(); l.Checksum != 0 && (err != nil || !r.Valid) {
						t.Errorf("UDP checksum %#04x, want %#04x", l.Checksum, r.Correct)
					}
					if _, v6 := ips[len(ips)-1].(*layers.IPv6); v6 == (l.Checksum == 0) {
						t.Errorf("UDP checksum %#04x over IPv6=%v", l.Checksum, v6)
					}
					udps = append(udps, l)
				case *layers.GTPv1U:
					tn := f.Tunnel
					h := l.GTPExtensionHeaders
					if l.TEID != tn.TEID || len(h) != 1 || h[0].Type != 0x85 || h[0].Content[1] != tn.QFI || (h[0].Content[0] == 0x10) != tn.Uplink {
						t.Errorf("GTP-U %+v, want TEID %#x and a PDU Session Container with QFI %d", l, tn.TEID, tn.QFI)
					}
				}
			}
			inner, udp := ips[len(ips)-1].NetworkFlow(), udps[len(udps)-1]
			if inner.Src().String() != f.From.Addr().String() || inner.Dst().String() != f.To.Addr().String() ||
				uint16(udp.SrcPort) != f.From.Port() || uint16(udp.DstPort) != f.To.Port() || string(udp.Payload) != "thirteen byte" {
				t.Errorf("inner %v %v:%d>%d %q", inner, udp.SrcPort, udp.SrcPort, udp.DstPort, udp.Payload)
			}
			if l := f.Layout(); l.Payload != len(f.Bytes())-13 || string(f.Bytes()[l.Payload:]) != "thirteen byte" {
				t.Errorf("layout %+v: the payload is not where it says", l)
			}
		})
	}
}
