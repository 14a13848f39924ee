package tgen

import (
	"encoding/binary"
	"net"
	"net/netip"
	"runtime"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/topo"
)

// testSpec is three sessions whose TEIDs and UE addresses follow no order,
// two flows each, 100-byte packets.
func testSpec(dir Direction, v6 bool) Spec {
	s := Spec{Direction: dir, Flows: 2, Size: 100, GNB: topo.GNBN3, UPF: topo.UPFN3, DN: topo.DNHost,
		Sessions: []Session{
			{UE: netip.MustParseAddr("10.45.0.7"), UplinkTEID: 0x100, DownlinkTEID: 0x9000, QFI: 9},
			{UE: netip.MustParseAddr("10.45.3.1"), UplinkTEID: 0x12345, DownlinkTEID: 0x77, QFI: 5},
			{UE: netip.MustParseAddr("10.45.0.2"), UplinkTEID: 0x3, DownlinkTEID: 0xfffffff0, QFI: 63},
		}}
	if v6 {
		s.GNB, s.UPF, s.DN = topo.GNBN3v6, topo.UPFN3v6, topo.DNHostV6
		for i := range s.Sessions {
			s.Sessions[i].UE = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0x45, 15: byte(7 * (i + 1))})
		}
	}
	s.SrcMAC, s.DstMAC = topo.MACGNBN3, topo.MACUPFN3
	if dir == Downlink {
		s.SrcMAC, s.DstMAC = topo.MACDNN6, topo.MACUPFN6
	}
	return s
}

// stampBytes is the payload of flow's frame seq: the stamp, then zeros.
func stampBytes(flow uint32, seq, sentNS uint64, n int) []byte {
	b := make([]byte, n)
	binary.BigEndian.PutUint32(b, 0x534c4331)
	binary.BigEndian.PutUint32(b[4:], flow)
	binary.BigEndian.PutUint64(b[8:], seq)
	binary.BigEndian.PutUint64(b[16:], sentNS)
	return b
}

// Frames for the tests are built with gopacket, an encoder independent of
// lab/pkt and of the programs, so the expected bytes share neither's
// mistakes.

// datagram is an IP packet with UDP in it.
func datagram(src, dst netip.AddrPort, payload []byte) []gopacket.SerializableLayer {
	udp := &layers.UDP{SrcPort: layers.UDPPort(src.Port()), DstPort: layers.UDPPort(dst.Port())}
	var ip gopacket.SerializableLayer
	if src.Addr().Is4() {
		v4 := &layers.IPv4{Version: 4, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolUDP,
			SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		udp.SetNetworkLayerForChecksum(v4)
		ip = v4
	} else {
		v6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP,
			SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		udp.SetNetworkLayerForChecksum(v6)
		ip = v6
	}
	return []gopacket.SerializableLayer{ip, udp, gopacket.Payload(payload)}
}

// gpdu is a G-PDU from src to dst with a PDU Session Container.
func gpdu(src, dst netip.Addr, teid uint32, pduType, qfi uint8, inner []gopacket.SerializableLayer) []gopacket.SerializableLayer {
	g := &layers.GTPv1U{Version: 1, ProtocolType: 1, MessageType: 255, TEID: teid,
		GTPExtensionHeaders: []layers.GTPExtensionHeader{{Type: 0x85, Content: []byte{pduType << 4, qfi}}}}
	outer := datagram(netip.AddrPortFrom(src, 2152), netip.AddrPortFrom(dst, 2152), nil)
	return append(append(outer[:2:2], g), inner...)
}

// frame is the layers in Ethernet, serialized with lengths and checksums,
// then every UDP checksum over IPv4 set to 0, as the generator sends them.
func frame(dst, src net.HardwareAddr, ls []gopacket.SerializableLayer) []byte {
	et := layers.EthernetTypeIPv6
	if _, ok := ls[0].(*layers.IPv4); ok {
		et = layers.EthernetTypeIPv4
	}
	buf := gopacket.NewSerializeBuffer()
	eth := &layers.Ethernet{DstMAC: dst, SrcMAC: src, EthernetType: et}
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, append([]gopacket.SerializableLayer{eth}, ls...)...)
	if err != nil {
		panic(err)
	}
	b := buf.Bytes()
	off := 14
	for _, l := range ls {
		switch l := l.(type) {
		case *layers.IPv4:
			off += 20
			if l.Protocol == layers.IPProtocolUDP {
				b[off+6], b[off+7] = 0, 0
			}
		case *layers.IPv6:
			off += 40
		case *layers.UDP:
			off += 8
		case *layers.GTPv1U:
			off += 8
			if len(l.GTPExtensionHeaders) > 0 || l.SequenceNumberFlag || l.NPDUFlag {
				off += 4
			}
			for _, e := range l.GTPExtensionHeaders {
				off += 2 + len(e.Content) // length, content, next type
			}
		}
	}
	return b
}

// ends are flow's session and the ends of its datagrams, and the payload
// of its seq-th, at size bytes of inner IP, stamped sentNS.
func ends(s Spec, flow int, seq uint64, size int, sentNS uint64) (sess Session, ue, dn netip.AddrPort, payload []byte) {
	sess = s.Sessions[flow%len(s.Sessions)]
	ue = netip.AddrPortFrom(sess.UE, uint16(UEPort+flow/len(s.Sessions)))
	dn = netip.AddrPortFrom(s.DN, DNPort)
	return sess, ue, dn, stampBytes(uint32(flow), seq, sentNS, size-ipHeaderLen(sess.UE)-8)
}

// sent is the frame the generator sends for flow's seq-th frame, at size
// bytes of inner IP, stamped sentNS.
func sent(s Spec, flow int, seq uint64, size int, sentNS uint64) []byte {
	sess, ue, dn, payload := ends(s, flow, seq, size, sentNS)
	if s.Direction == Downlink {
		return frame(s.DstMAC, s.SrcMAC, datagram(dn, ue, payload))
	}
	return frame(s.DstMAC, s.SrcMAC, gpdu(s.GNB, s.UPF, sess.UplinkTEID, 1, sess.QFI, datagram(ue, dn, payload)))
}

// forwarded is that frame as a UPF sends it on: uplink decapsulated,
// downlink in a G-PDU to the gNB with the session's downlink TEID and QFI.
// (The lab's UPF would also lower the TTL: the sink does not care.)
func forwarded(s Spec, flow int, seq uint64, size int, sentNS uint64) []byte {
	sess, ue, dn, payload := ends(s, flow, seq, size, sentNS)
	if s.Direction == Uplink {
		return frame(topo.MACDNN6, topo.MACUPFN6, datagram(ue, dn, payload))
	}
	return frame(topo.MACGNBN3, topo.MACUPFN3, gpdu(s.UPF, s.GNB, sess.DownlinkTEID, 0, sess.QFI, datagram(dn, ue, payload)))
}

// ipv4HeaderOK checks an IPv4 header's checksum from first principles:
// its 16-bit words sum to 0xffff in one's complement (RFC 1071).
func ipv4HeaderOK(h []byte) bool {
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

// monotonic is the clock of bpf_ktime_get_ns.
func monotonic(t *testing.T) uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return uint64(ts.Nano())
}

// onCPU runs fn on a thread pinned to cpu: per-CPU state is that CPU's.
func onCPU(t testing.TB, cpu int, fn func()) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Fatal(err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &old)
	fn()
}

// runXDP runs prog once on in; it returns the verdict and the frame out.
func runXDP(t *testing.T, prog *ebpf.Program, in []byte) (uint32, []byte) {
	t.Helper()
	out := make([]byte, len(in)+256)
	opts := &ebpf.RunOptions{Data: in, DataOut: out}
	ret, err := prog.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	return ret, opts.DataOut
}

// sentPerFlow is the generator's count of each flow, and their sum.
func sentPerFlow(t testing.TB, g *Generator) ([]uint64, uint64) {
	t.Helper()
	sent, err := g.Sent()
	if err != nil {
		t.Fatal(err)
	}
	return sent, sum(sent)
}

func newGenerator(t *testing.T, s Spec) *Generator {
	t.Helper()
	testenv.RequirePrivileges(t)
	g, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}
