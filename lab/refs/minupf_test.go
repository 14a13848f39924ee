package refs

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/internal/testpkt"
)

// The testenv.UPF namespace: n3 198.18.3.2 toward the gNBs, n6 toward the
// router in front of the data network.
var (
	addrN3   = netip.MustParseAddr("198.18.3.2")
	addrGNB  = netip.MustParseAddr("198.18.3.1")
	addrGNB2 = netip.MustParseAddr("198.18.3.11")
	addrDN   = netip.MustParseAddr("198.18.7.10")
	addrDN6  = netip.MustParseAddr("2001:2:0:7::10")
)

// testSessions: TEIDs and UE addresses that follow no order, two gNBs.
// The MAC of a downlink frame is N3's peer whatever the gNB: the minimal UPF
// takes its MACs from load time, not from a FIB.
var testSessions = []Session{
	{UplinkTEID: 0x100, UE: netip.MustParseAddr("10.45.0.2"), DownlinkTEID: 0x9000, GNB: addrGNB, QFI: 9},
	{UplinkTEID: 0x12345, UE: netip.MustParseAddr("10.45.3.1"), DownlinkTEID: 0x77, GNB: addrGNB2, QFI: 5},
	{UplinkTEID: 0xfffffff0, UE: netip.MustParseAddr("10.45.0.7"), DownlinkTEID: 0x3, GNB: addrGNB, QFI: 63},
}

// Frames are built with gopacket, an encoder independent of the program,
// so the expected bytes do not share its mistakes.

// datagram is an IP packet from src to dst with UDP and n bytes of payload.
func datagram(src, dst netip.Addr, n int) []gopacket.SerializableLayer {
	payload := make([]byte, n)
	for i := range payload {
		payload[i] = byte(i)
	}
	udp := &layers.UDP{SrcPort: 40000, DstPort: 5001}
	var ip gopacket.SerializableLayer
	if src.Is4() {
		v4 := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
		udp.SetNetworkLayerForChecksum(v4)
		ip = v4
	} else {
		v6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
		udp.SetNetworkLayerForChecksum(v6)
		ip = v6
	}
	return []gopacket.SerializableLayer{ip, udp, gopacket.Payload(payload)}
}

// ipLen is the length of the IP packet of ls.
func ipLen(ls []gopacket.SerializableLayer) uint64 {
	return uint64(len(testpkt.Serialize(ls...)))
}

// uplink is a G-PDU from the gNB to N3 carrying inner.
func uplink(tn testpkt.Tunnel, inner []gopacket.SerializableLayer) []byte {
	return testpkt.Frame(testenv.MACN3, testenv.MACGNB, tn.Layers(inner))
}

// decapped is inner as the minimal UPF sends it to the router: only the
// Ethernet header is new (no TTL decrement).
func decapped(inner []gopacket.SerializableLayer) []byte {
	return testpkt.Frame(testenv.MACRouter, testenv.MACN6, inner)
}

// downlink is an IP packet from the router.
func downlink(inner []gopacket.SerializableLayer) []byte {
	return testpkt.Frame(testenv.MACN6, testenv.MACRouter, inner)
}

// encapped is inner as the minimal UPF sends it to session s's gNB: from
// N3, DF, TTL 64, UDP 2152 to 2152 without a checksum, GTP-U with the DL
// PDU Session Container and the session's QFI.
func encapped(s Session, inner []gopacket.SerializableLayer) []byte {
	tn := testpkt.Tunnel{Src: addrN3, Dst: s.GNB, TEID: s.DownlinkTEID, PSC: true, QFI: s.QFI}
	b := testpkt.Frame(testenv.MACGNB, testenv.MACN3, tn.Layers(inner))
	binary.BigEndian.PutUint16(b[14+20+6:], 0)
	return b
}

// pad appends Ethernet padding.
func pad(b []byte, n int) []byte { return append(b, make([]byte, n)...) }

func loadMinimal(t *testing.T, ns string, sessions []Session) *Minimal {
	t.Helper()
	var m *Minimal
	err := netns.Do(ns, func() (err error) {
		m, err = LoadMinimal(Port{Name: "n3", Peer: testenv.MACGNB}, Port{Name: "n6", Peer: testenv.MACRouter},
			MinimalOptions{GTPUAddr: addrN3, MaxSessions: 16})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.Add(sessions); err != nil {
		t.Fatal(err)
	}
	return m
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

// XDP verdicts.
const (
	xdpDrop     = 1
	xdpPass     = 2
	xdpRedirect = 4
)

func TestPrivilegedMinimal(t *testing.T) {
	ns := testenv.UPF(t)
	s0, s1, s2 := testSessions[0], testSessions[1], testSessions[2]
	up := func(s Session) []gopacket.SerializableLayer { return datagram(s.UE, addrDN, 64) }
	down := func(s Session) []gopacket.SerializableLayer { return datagram(addrDN, s.UE, 64) }
	ul := func(s Session) testpkt.Tunnel {
		return testpkt.Tunnel{Src: addrGNB, Dst: addrN3, TEID: s.UplinkTEID, PSC: true, PDUType: 1, QFI: s.QFI}
	}
	seq := uint16(0x1234)
	short := datagram(addrDN, s1.UE, 2) // 30 bytes: gopacket pads the frame with 16 to 60
	for _, c := range []struct {
		name    string
		uplink  bool // into the N3 program, else the N6 one
		in      []byte
		verdict uint32
		out     []byte           // Redirected: the frame sent; Passed: the frame unchanged
		counted map[int]Counters // by session; the others count nothing
	}{
		{name: "uplink decap with PDU Session Container", uplink: true, in: uplink(ul(s0), up(s0)),
			verdict: xdpRedirect, out: decapped(up(s0)),
			counted: map[int]Counters{0: {UplinkPackets: 1, UplinkBytes: ipLen(up(s0))}}},
		{name: "uplink decap without extension headers", uplink: true,
			in:      uplink(testpkt.Tunnel{Src: addrGNB, Dst: addrN3, TEID: s1.UplinkTEID}, up(s1)),
			verdict: xdpRedirect, out: decapped(up(s1)),
			counted: map[int]Counters{1: {UplinkPackets: 1, UplinkBytes: ipLen(up(s1))}}},
		{name: "uplink decap with a sequence number and an extension before the container", uplink: true,
			in: func() []byte {
				tn := ul(s2)
				tn.Seq, tn.Exts = &seq, []layers.GTPExtensionHeader{{Type: 0x40, Content: []byte{0x08, 0x68}}}
				return uplink(tn, up(s2))
			}(),
			verdict: xdpRedirect, out: decapped(up(s2)),
			counted: map[int]Counters{2: {UplinkPackets: 1, UplinkBytes: ipLen(up(s2))}}},
		{name: "uplink IPv6 PDU", uplink: true,
			in:      uplink(ul(s0), datagram(netip.MustParseAddr("2001:2:0:45::2"), addrDN6, 64)),
			verdict: xdpRedirect, out: decapped(datagram(netip.MustParseAddr("2001:2:0:45::2"), addrDN6, 64)),
			counted: map[int]Counters{0: {UplinkPackets: 1, UplinkBytes: 40 + 8 + 64}}},
		{name: "uplink unknown TEID dropped", uplink: true,
			in: uplink(testpkt.Tunnel{Src: addrGNB, Dst: addrN3, TEID: 0x101, PSC: true, PDUType: 1, QFI: 9}, up(s0)), verdict: xdpDrop},
		{name: "uplink G-PDU to another address is the kernel's", uplink: true,
			in: uplink(testpkt.Tunnel{Src: addrGNB, Dst: netip.MustParseAddr("198.18.3.3"), TEID: s0.UplinkTEID}, up(s0)), verdict: xdpPass},
		{name: "uplink Echo Request is the kernel's", uplink: true,
			in: uplink(testpkt.Tunnel{Src: addrGNB, Dst: addrN3, MsgType: 1, Seq: &seq}, nil), verdict: xdpPass},
		{name: "uplink G-PDU whose length runs past the frame is the kernel's", uplink: true,
			in: func() []byte {
				b := uplink(ul(s0), up(s0))
				binary.BigEndian.PutUint16(b[14+20+8+2:], uint16(len(b)))
				return b
			}(),
			verdict: xdpPass},
		{name: "downlink encap with PDU Session Container", in: downlink(down(s0)),
			verdict: xdpRedirect, out: encapped(s0, down(s0)),
			counted: map[int]Counters{0: {DownlinkPackets: 1, DownlinkBytes: ipLen(down(s0))}}},
		{name: "downlink to another gNB, QFI 5", in: downlink(down(s1)),
			verdict: xdpRedirect, out: encapped(s1, down(s1)),
			counted: map[int]Counters{1: {DownlinkPackets: 1, DownlinkBytes: ipLen(down(s1))}}},
		{name: "downlink Ethernet padding stays outside the lengths", in: downlink(short),
			verdict: xdpRedirect, out: pad(encapped(s1, short), 16),
			counted: map[int]Counters{1: {DownlinkPackets: 1, DownlinkBytes: 30}}},
		{name: "downlink unknown UE dropped", in: downlink(datagram(addrDN, netip.MustParseAddr("10.45.0.3"), 64)), verdict: xdpDrop},
		{name: "downlink IPv4 length that runs past the frame dropped",
			in: func() []byte {
				b := downlink(down(s0))
				binary.BigEndian.PutUint16(b[14+2:], uint16(len(b)))
				return b
			}(),
			verdict: xdpDrop},
		{name: "downlink IPv6 is the kernel's", in: downlink(datagram(addrDN6, netip.MustParseAddr("2001:2:0:45::2"), 64)), verdict: xdpPass},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := loadMinimal(t, ns, testSessions)
			prog := m.Downlink()
			if c.uplink {
				prog = m.Uplink()
			}
			verdict, out := run(t, prog, c.in)
			if verdict != c.verdict {
				t.Errorf("verdict %d, want %d", verdict, c.verdict)
			}
			want := c.out
			if c.verdict == xdpPass {
				want = c.in
			}
			if want != nil && !bytes.Equal(out, want) {
				t.Errorf("frame out:\n%s\nwant:\n%s", hex.Dump(out), hex.Dump(want))
			}
			for i := range testSessions {
				got, err := m.Counters(i)
				if err != nil {
					t.Fatal(err)
				}
				if got != c.counted[i] {
					t.Errorf("session %d counted %+v, want %+v", i, got, c.counted[i])
				}
			}
		})
	}
}

// Counts add up per session and direction, whichever CPU ran the program,
// and a session added later has its own record.
func TestPrivilegedMinimalCounters(t *testing.T) {
	ns := testenv.UPF(t)
	m := loadMinimal(t, ns, testSessions[:2])
	if err := m.Add(testSessions[2:]); err != nil {
		t.Fatal(err)
	}
	s2 := testSessions[2]
	up := datagram(s2.UE, addrDN, 100)
	down := datagram(addrDN, s2.UE, 1000)
	for range 3 {
		run(t, m.Uplink(), uplink(testpkt.Tunnel{Src: addrGNB, Dst: addrN3, TEID: s2.UplinkTEID, PSC: true, PDUType: 1, QFI: 9}, up))
	}
	for range 2 {
		run(t, m.Downlink(), downlink(down))
	}
	want := Counters{UplinkPackets: 3, UplinkBytes: 3 * 128, DownlinkPackets: 2, DownlinkBytes: 2 * 1028}
	if got, err := m.Counters(2); err != nil || got != want {
		t.Errorf("session 2 counted %+v (%v), want %+v", got, err, want)
	}
	for i := range 2 {
		if got, err := m.Counters(i); err != nil || got != (Counters{}) {
			t.Errorf("session %d counted %+v (%v), want nothing", i, got, err)
		}
	}
	if _, err := m.Counters(3); err == nil {
		t.Error("counters of a session never added")
	}
	if err := m.Add(make([]Session, 14)); err == nil {
		t.Error("added 17 sessions to a minimal UPF for 16")
	}
}
