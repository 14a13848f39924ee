package gnb

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/internal/testpkt"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// The fixtures' world: the gNB's n3 with the lab's MACs, the UPF at
// 198.18.3.2 behind it.
var (
	macGNBN3 = topo.MACGNBN3
	macUPFN3 = topo.MACUPFN3
	addrUPF  = topo.UPFN3
	addrGNB  = topo.GNBN3
	addrGNB2 = topo.GNB2N3
	addrDN   = topo.DNHost
	addrDN6  = topo.DNHostV6
)

// testSessions: TEIDs and addresses that follow no order, two gNB
// addresses, one session without IPv6.
var testSessions = []smf.Session{
	{UE: netip.MustParseAddr("10.32.0.1"), UEv6: netip.MustParsePrefix("2001:db8:30::/64"),
		UplinkTEID: 0x100, UplinkAddr: addrUPF, DownlinkTEID: 1, GNB: addrGNB, QFI: 1},
	{UE: netip.MustParseAddr("10.32.3.7"),
		UplinkTEID: 0x12345678, UplinkAddr: addrUPF, DownlinkTEID: 0x9000, GNB: addrGNB2, QFI: 9},
	{UE: netip.MustParseAddr("10.45.0.2"), UEv6: netip.MustParsePrefix("2001:db8:3f:ffff::/64"),
		UplinkTEID: 0xfffffff0, UplinkAddr: addrUPF, DownlinkTEID: 0xabcdef, GNB: addrGNB, QFI: 63},
}

// Frames are built with gopacket, an encoder independent of the programs,
// so that the expected bytes do not share their mistakes.

// datagram is an IP packet from src to dst with UDP and n bytes of payload.
func datagram(src, dst netip.Addr, n int) []gopacket.SerializableLayer {
	payload := make([]byte, n)
	for i := range payload {
		payload[i] = byte(i)
	}
	udp := &layers.UDP{SrcPort: 40000, DstPort: 5201}
	return ipLayers(src, dst, layers.IPProtocolUDP, udp, udp, gopacket.Payload(payload))
}

// segment is a TCP segment from src to dst with n bytes of payload.
func segment(src, dst netip.Addr, n int) []gopacket.SerializableLayer {
	tcp := &layers.TCP{SrcPort: 41000, DstPort: 80, Seq: 0x01020304, Ack: 0x0a0b0c0d, ACK: true, PSH: true, Window: 502}
	payload := bytes.Repeat([]byte("sluice"), n/6+1)[:n]
	return ipLayers(src, dst, layers.IPProtocolTCP, tcp, tcp, gopacket.Payload(payload))
}

// checksummed is a transport layer whose checksum covers a network layer.
type checksummed interface {
	SetNetworkLayerForChecksum(gopacket.NetworkLayer) error
}

func ipLayers(src, dst netip.Addr, proto layers.IPProtocol, l4 checksummed, ls ...gopacket.SerializableLayer) []gopacket.SerializableLayer {
	if src.Is4() {
		v4 := &layers.IPv4{Version: 4, TTL: 64, Id: 0x4242, Flags: layers.IPv4DontFragment, Protocol: proto, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
		l4.SetNetworkLayerForChecksum(v4)
		return append([]gopacket.SerializableLayer{v4}, ls...)
	}
	v6 := &layers.IPv6{Version: 6, HopLimit: 64, FlowLabel: 0x12345, NextHeader: proto, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
	l4.SetNetworkLayerForChecksum(v6)
	return append([]gopacket.SerializableLayer{v6}, ls...)
}

// fromUE is what a UE sends on ue0.
func fromUE(inner []gopacket.SerializableLayer) []byte { return testpkt.Frame(MACGNBUE, MACUE, inner) }

// toUE is what the gNB sends to the UEs through gnbue.
func toUE(inner []gopacket.SerializableLayer) []byte { return testpkt.Frame(MACUE, MACGNBUE, inner) }

// fromUPF is a G-PDU the UPF sends to the gNB's n3.
func fromUPF(tn testpkt.Tunnel, inner []gopacket.SerializableLayer) []byte {
	return testpkt.Frame(macGNBN3, macUPFN3, tn.Layers(inner))
}

// encapped is what the gNB sends the UPF for session s: from its gNB
// address, DF, TTL 64, ID 0, UDP 2152 to 2152 without a checksum, GTP-U
// with the UL PDU Session Container and the session's QFI.
func encapped(s smf.Session, inner []gopacket.SerializableLayer) []byte {
	tn := testpkt.Tunnel{Src: s.GNB, Dst: s.UplinkAddr, TEID: s.UplinkTEID, PSC: true, PDUType: 1, QFI: s.QFI}
	b := testpkt.Frame(macUPFN3, macGNBN3, tn.Layers(inner))
	binary.BigEndian.PutUint16(b[14+20+6:], 0)
	return b
}

func ipLen(ls []gopacket.SerializableLayer) uint64 { return uint64(len(testpkt.Serialize(ls...))) }

func pad(b []byte, n int) []byte { return append(b, make([]byte, n)...) }

// fixtureGNB loads the programs with sessions in a namespace of their own
// whose n3 and gnbue have the lab's MACs and whose UPF is a static
// neighbour: a fresh collection for each case.
func fixtureGNB(t *testing.T, ns string, sessions []smf.Session) *GNB {
	t.Helper()
	ues, err := uesOf(sessions)
	if err != nil {
		t.Fatal(err)
	}
	g := &GNB{lab: topo.Lab{Names: topo.Names{GNB: ns}}, ues: ues}
	if err := g.loadObjects(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.objs.Close() })
	return g
}

func fixtureNamespace(t *testing.T) string {
	t.Helper()
	ns := testenv.Namespace(t, "sluice-gnb")
	in := func(args ...string) { testenv.Sh(t, append([]string{"ip", "-n", ns}, args...)...) }
	in("link", "add", "n3", "address", macGNBN3.String(), "type", "veth", "peer", "name", "n3p")
	in("link", "add", DevGNBUE, "address", MACGNBUE.String(), "type", "veth", "peer", "name", DevUE)
	in("neigh", "replace", addrUPF.String(), "lladdr", macUPFN3.String(), "dev", "n3", "nud", "permanent")
	return ns
}

// run runs prog once on frame and returns the verdict and the frame as it
// left the program.
func run(t *testing.T, prog *ebpf.Program, frame []byte) (uint32, []byte) {
	t.Helper()
	opts := &ebpf.RunOptions{Data: frame, DataOut: make([]byte, len(frame)+256)}
	verdict, err := prog.Run(opts)
	if err != nil {
		t.Fatalf("prog.Run: %v", err)
	}
	return verdict, opts.DataOut
}

// Verdicts of XDP and TC programs.
const (
	xdpDrop     = 1
	xdpPass     = 2
	xdpRedirect = 4
	tcUnspec    = 0xffffffff // TC_ACT_UNSPEC, -1: not ours
	tcShot      = 2
	tcRedirect  = 7
)

// prog names which of the gNB's programs a case runs.
type prog int

const (
	progULXDP prog = iota
	progULTC
	progDL
)

func (p prog) of(g *GNB) *ebpf.Program {
	return [...]*ebpf.Program{g.objs.XdpGnbUl, g.objs.TcGnbUl, g.objs.XdpGnbDl}[p]
}

func (p prog) String() string { return [...]string{"xdp uplink", "tc uplink", "downlink"}[p] }

type fixture struct {
	name    string
	in      []byte
	verdict uint32
	out     []byte // Redirected: the frame sent; not ours: nil, the frame unchanged
	counted map[int]Traffic
	others  [4]uint64 // UplinkPassed, UplinkDropped, DownlinkPassed, DownlinkDropped
}

func TestPrivilegedUplinkEncapsulation(t *testing.T) {
	ns := fixtureNamespace(t)
	s0, s1, s2 := testSessions[0], testSessions[1], testSessions[2]
	ue6 := func(s smf.Session, iid byte) netip.Addr {
		a := s.UEv6.Addr().As16()
		a[15] = iid
		return netip.AddrFrom16(a)
	}
	udp4 := datagram(s0.UE, addrDN, 100)
	tcp4 := segment(s1.UE, addrDN, 1360) // a full 1400-byte packet
	tcp6 := segment(ue6(s2, 1), addrDN6, 600)
	other6 := segment(ue6(s0, 0x77), addrDN6, 60) // any address in the session's /64
	short := datagram(s2.UE, addrDN, 2)           // 30 bytes: gopacket pads the frame with 16 to 60
	arp := testpkt.Serialize(&layers.Ethernet{DstMAC: layers.EthernetBroadcast, SrcMAC: MACUE, EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: layers.ARPRequest, SourceHwAddress: MACUE, SourceProtAddress: s0.UE.AsSlice(),
			DstHwAddress: make([]byte, 6), DstProtAddress: gwUE.AsSlice()})
	lies := fromUE(datagram(s0.UE, addrDN, 100))
	binary.BigEndian.PutUint16(lies[14+2:], uint16(len(lies)))
	for _, p := range []prog{progULXDP, progULTC} {
		redirect, pass, drop := uint32(xdpRedirect), uint32(xdpPass), uint32(xdpDrop)
		if p == progULTC {
			redirect, pass, drop = tcRedirect, tcUnspec, tcShot
		}
		for _, c := range []fixture{
			{name: "IPv4 UDP, the UL PDU Session Container with the session's QFI", in: fromUE(udp4),
				verdict: redirect, out: encapped(s0, udp4),
				counted: map[int]Traffic{0: {UplinkPackets: 1, UplinkBytes: ipLen(udp4)}}},
			{name: "IPv4 TCP at the MTU, from the second gNB address", in: fromUE(tcp4),
				verdict: redirect, out: encapped(s1, tcp4),
				counted: map[int]Traffic{1: {UplinkPackets: 1, UplinkBytes: 1400}}},
			{name: "IPv6 TCP by the UE's /64, QFI 63", in: fromUE(tcp6),
				verdict: redirect, out: encapped(s2, tcp6),
				counted: map[int]Traffic{2: {UplinkPackets: 1, UplinkBytes: ipLen(tcp6)}}},
			{name: "IPv6 from another address of the /64", in: fromUE(other6),
				verdict: redirect, out: encapped(s0, other6),
				counted: map[int]Traffic{0: {UplinkPackets: 1, UplinkBytes: ipLen(other6)}}},
			{name: "Ethernet padding stays out of the tunnel", in: fromUE(short),
				verdict: redirect, out: encapped(s2, short),
				counted: map[int]Traffic{2: {UplinkPackets: 1, UplinkBytes: 30}}},
			{name: "an address that is no UE's is the kernel's", in: fromUE(datagram(netip.MustParseAddr("10.32.0.2"), addrDN, 64)),
				verdict: pass, others: [4]uint64{1, 0, 0, 0}},
			{name: "a /64 that is no UE's is the kernel's", in: fromUE(datagram(netip.MustParseAddr("2001:db8:30:1::1"), addrDN6, 64)),
				verdict: pass, others: [4]uint64{1, 0, 0, 0}},
			{name: "ARP is the kernel's", in: arp, verdict: pass, others: [4]uint64{1, 0, 0, 0}},
			{name: "a UE's packet whose length runs past the frame is dropped", in: lies,
				verdict: drop, others: [4]uint64{0, 1, 0, 0}},
		} {
			t.Run(p.String()+"/"+c.name, func(t *testing.T) { c.check(t, fixtureGNB(t, ns, testSessions), p) })
		}
	}
}

func TestPrivilegedDownlinkDecapsulation(t *testing.T) {
	ns := fixtureNamespace(t)
	s0, s1, s2 := testSessions[0], testSessions[1], testSessions[2]
	dl := func(s smf.Session) testpkt.Tunnel {
		return testpkt.Tunnel{Src: addrUPF, Dst: s.GNB, TEID: s.DownlinkTEID, PSC: true, PDUType: 0, QFI: s.QFI}
	}
	seq := uint16(0x1234)
	udp4 := datagram(addrDN, s0.UE, 100)
	tcp4 := segment(addrDN, s1.UE, 1360)
	tcp6 := segment(addrDN6, netip.MustParseAddr("2001:db8:3f:ffff::1"), 600)
	short := datagram(addrDN, s1.UE, 2)
	lies := fromUPF(dl(s0), udp4)
	binary.BigEndian.PutUint16(lies[14+20+8+2:], uint16(len(lies)))
	noIP := fromUPF(dl(s0), udp4)
	noIP[len(noIP)-len(testpkt.Serialize(udp4...))] = 0x55 // version 5
	for _, c := range []fixture{
		{name: "with the DL PDU Session Container", in: fromUPF(dl(s0), udp4),
			verdict: xdpRedirect, out: toUE(udp4),
			counted: map[int]Traffic{0: {DownlinkPackets: 1, DownlinkBytes: ipLen(udp4)}}},
		{name: "without extension headers", in: fromUPF(testpkt.Tunnel{Src: addrUPF, Dst: addrGNB2, TEID: s1.DownlinkTEID}, tcp4),
			verdict: xdpRedirect, out: toUE(tcp4),
			counted: map[int]Traffic{1: {DownlinkPackets: 1, DownlinkBytes: 1400}}},
		{name: "with a sequence number and an extension header before the container",
			in: func() []byte {
				tn := dl(s2)
				tn.Seq, tn.Exts = &seq, []layers.GTPExtensionHeader{{Type: 0x40, Content: []byte{0x08, 0x68}}}
				return fromUPF(tn, tcp6)
			}(),
			verdict: xdpRedirect, out: toUE(tcp6),
			counted: map[int]Traffic{2: {DownlinkPackets: 1, DownlinkBytes: ipLen(tcp6)}}},
		{name: "with a sequence number only", in: func() []byte {
			tn := testpkt.Tunnel{Src: addrUPF, Dst: addrGNB, TEID: s0.DownlinkTEID, Seq: &seq}
			return fromUPF(tn, udp4)
		}(),
			verdict: xdpRedirect, out: toUE(udp4),
			counted: map[int]Traffic{0: {DownlinkPackets: 1, DownlinkBytes: ipLen(udp4)}}},
		{name: "Ethernet padding after the outer packet stays behind",
			in:      pad(fromUPF(dl(s1), short), 8),
			verdict: xdpRedirect, out: toUE(short)[:14+30], // a veth pads nothing
			counted: map[int]Traffic{1: {DownlinkPackets: 1, DownlinkBytes: 30}}},
		{name: "a TEID that is no session's is the kernel's (the lab's probes)",
			in: fromUPF(testpkt.Tunnel{Src: addrUPF, Dst: addrGNB, TEID: 2, PSC: true, QFI: 1}, udp4), verdict: xdpPass, others: [4]uint64{0, 0, 1, 0}},
		{name: "an Echo Request is the kernel's",
			in: fromUPF(testpkt.Tunnel{Src: addrUPF, Dst: addrGNB, TEID: 0, MsgType: 1, Seq: &seq}, nil), verdict: xdpPass, others: [4]uint64{0, 0, 1, 0}},
		{name: "an End Marker of a session's TEID is the kernel's",
			in: fromUPF(testpkt.Tunnel{Src: addrUPF, Dst: addrGNB, TEID: s0.DownlinkTEID, MsgType: 254}, nil), verdict: xdpPass, others: [4]uint64{0, 0, 1, 0}},
		{name: "UDP to another port is the kernel's",
			in: testpkt.Frame(macGNBN3, macUPFN3, datagram(addrUPF, addrGNB, 64)), verdict: xdpPass, others: [4]uint64{0, 0, 1, 0}},
		{name: "a G-PDU whose length runs past the frame is dropped", in: lies, verdict: xdpDrop, others: [4]uint64{0, 0, 0, 1}},
		{name: "a G-PDU that holds no IP packet is dropped", in: noIP, verdict: xdpDrop, others: [4]uint64{0, 0, 0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, fixtureGNB(t, ns, testSessions), progDL) })
	}
}

func (c fixture) check(t *testing.T, g *GNB, p prog) {
	t.Helper()
	verdict, out := run(t, p.of(g), c.in)
	if verdict != c.verdict {
		t.Errorf("verdict %d, want %d", verdict, c.verdict)
	}
	want := c.out
	if want == nil && (verdict == xdpPass || verdict == tcUnspec) {
		want = c.in
	}
	if want != nil && !bytes.Equal(out, want) {
		t.Errorf("frame out:\n%s\nwant:\n%s", hex.Dump(out), hex.Dump(want))
	}
	got, err := g.Counters()
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.ues {
		if got.UEs[i] != c.counted[i] {
			t.Errorf("UE %d counted %+v, want %+v", i, got.UEs[i], c.counted[i])
		}
	}
	if others := [4]uint64{got.UplinkPassed, got.UplinkDropped, got.DownlinkPassed, got.DownlinkDropped}; others != c.others {
		t.Errorf("passed and dropped %v, want %v", others, c.others)
	}
}

// The UEs' counters add up per UE and direction, and into the total.
func TestPrivilegedCounters(t *testing.T) {
	g := fixtureGNB(t, fixtureNamespace(t), testSessions)
	s1 := testSessions[1]
	up, down := datagram(s1.UE, addrDN, 100), datagram(addrDN, s1.UE, 1000)
	for range 3 {
		run(t, g.objs.XdpGnbUl, fromUE(up))
	}
	run(t, g.objs.TcGnbUl, fromUE(up))
	for range 2 {
		run(t, g.objs.XdpGnbDl, fromUPF(testpkt.Tunnel{Src: addrUPF, Dst: addrGNB2, TEID: s1.DownlinkTEID, PSC: true, QFI: 9}, down))
	}
	want := Traffic{UplinkPackets: 4, UplinkBytes: 4 * 128, DownlinkPackets: 2, DownlinkBytes: 2 * 1028}
	c, err := g.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if c.UEs[1] != want || c.Total != want || c.UEs[0] != (Traffic{}) || c.UEs[2] != (Traffic{}) {
		t.Errorf("counted %+v, total %+v; want %+v for UE 1 alone", c.UEs, c.Total, want)
	}
}

// TestSessionsRefused: what the gNB cannot carry is refused before
// anything is built, and says which session and why.
func TestSessionsRefused(t *testing.T) {
	ok := testSessions[0]
	for _, tc := range []struct {
		name   string
		change func(s *smf.Session)
		want   string
	}{
		{"an IPv6 UE address", func(s *smf.Session) { s.UE = netip.MustParseAddr("2001:db8::1") }, "UE address 2001:db8::1: want IPv4"},
		{"an IPv6 prefix other than a /64", func(s *smf.Session) { s.UEv6 = netip.MustParsePrefix("2001:db8::/56") }, "want an IPv6 /64"},
		{"no uplink TEID", func(s *smf.Session) { s.UplinkTEID = 0 }, "uplink F-TEID 0x0"},
		{"an IPv6 uplink address", func(s *smf.Session) { s.UplinkAddr = netip.MustParseAddr("2001:2:0:3::2") }, "want a TEID at an IPv4 address"},
		{"no gNB address", func(s *smf.Session) { s.GNB = netip.Addr{} }, "gNB address invalid IP: want IPv4"},
		{"a downlink TEID twice", func(s *smf.Session) { s.UE = netip.MustParseAddr("10.32.0.9") }, "sessions 0 and 1: the same downlink TEID 0x1"},
		{"a UE address twice", func(s *smf.Session) { s.DownlinkTEID = 2 }, "sessions 0 and 1: the same UE address 10.32.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.change(&s)
			sessions := []smf.Session{s}
			if strings.Contains(tc.want, "sessions 0 and 1") {
				sessions = []smf.Session{ok, s}
			}
			_, err := uesOf(sessions)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
	ues, err := uesOf(testSessions)
	if err != nil {
		t.Fatal(err)
	}
	if ues[0].AddrV6 != netip.MustParseAddr("2001:db8:30::1") || ues[1].AddrV6.IsValid() || ues[2].AddrV6 != netip.MustParseAddr("2001:db8:3f:ffff::1") {
		t.Errorf("IPv6 addresses %v %v %v: want ::1 of each /64, none without one", ues[0].AddrV6, ues[1].AddrV6, ues[2].AddrV6)
	}
}
