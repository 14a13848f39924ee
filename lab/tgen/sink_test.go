package tgen

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/topo"
)

func newSink(t *testing.T, s Spec, p Path) *Sink {
	t.Helper()
	testenv.RequirePrivileges(t)
	k, err := NewSink(s, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func stats(t *testing.T, k *Sink, sent []uint64) Stats {
	t.Helper()
	st, err := k.Stats(sent)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The kernel lists the sink by the name SinkProgram says.
func TestSinkProgramName(t *testing.T) {
	spec, err := loadSink()
	if err != nil {
		t.Fatal(err)
	}
	if p := spec.Programs[SinkProgram]; p == nil || p.Type != ebpf.XDP {
		t.Errorf("the sink has no XDP program %s: %v", SinkProgram, spec.Programs)
	}
}

// What the sink makes of one frame after a UPF: counted for its flow,
// refused for a reason, or not the lab's and passed.
func TestPrivilegedSinkJudges(t *testing.T) {
	up, down := testSpec(Uplink, false), testSpec(Downlink, false)
	sess := down.Sessions[1]
	ue := netip.AddrPortFrom(sess.UE, UEPort)
	dn := netip.AddrPortFrom(down.DN, DNPort)
	payload := stampBytes(1, 0, 0, 72)
	downG := func(teid uint32, pduType, qfi uint8, inner []gopacket.SerializableLayer) []byte {
		return frame(topo.MACGNBN3, topo.MACUPFN3, gpdu(down.UPF, down.GNB, teid, pduType, qfi, inner))
	}
	ip4 := func(dst netip.Addr, proto layers.IPProtocol, rest ...gopacket.SerializableLayer) []gopacket.SerializableLayer {
		return append([]gopacket.SerializableLayer{&layers.IPv4{Version: 4, TTL: 64, Protocol: proto,
			SrcIP: down.DN.AsSlice(), DstIP: dst.AsSlice()}}, rest...)
	}
	edit := func(b []byte, off int, v byte) []byte { b[off] ^= v; return b }
	for _, c := range []struct {
		name string
		spec Spec
		in   []byte
		bad  Reason // with valid and pass false
		ok   bool   // counted for flow 1
		pass bool
	}{
		{name: "uplink, decapsulated", spec: up, in: forwarded(up, 1, 0, 100, 0), ok: true},
		{name: "downlink, in a G-PDU", spec: down, in: forwarded(down, 1, 0, 100, 0), ok: true},
		{name: "uplink still encapsulated", spec: up, in: sent(up, 1, 0, 100, 0), bad: BadEncap},
		{name: "downlink not encapsulated", spec: down, in: sent(down, 1, 0, 100, 0), bad: BadEncap},
		{name: "downlink, the uplink TEID", spec: down, in: downG(sess.UplinkTEID, 0, sess.QFI, datagram(dn, ue, payload)), bad: BadTEID},
		{name: "downlink, another QFI", spec: down, in: downG(sess.DownlinkTEID, 0, sess.QFI+1, datagram(dn, ue, payload)), bad: BadQFI},
		{name: "downlink, UL PDU type", spec: down, in: downG(sess.DownlinkTEID, 1, sess.QFI, datagram(dn, ue, payload)), bad: BadPSC},
		{name: "downlink, no PDU Session Container", spec: down, in: frame(topo.MACGNBN3, topo.MACUPFN3, append(datagram(netip.AddrPortFrom(down.UPF, 2152), netip.AddrPortFrom(down.GNB, 2152), nil)[:2],
			append([]gopacket.SerializableLayer{&layers.GTPv1U{Version: 1, ProtocolType: 1, MessageType: 255, TEID: sess.DownlinkTEID}}, datagram(dn, ue, payload)...)...)), bad: BadPSC},
		{name: "downlink, another session's UE", spec: down, in: downG(sess.DownlinkTEID, 0, sess.QFI, datagram(dn, netip.AddrPortFrom(down.Sessions[0].UE, UEPort), payload)), bad: BadInner},
		{name: "downlink, another flow's port", spec: down, in: downG(sess.DownlinkTEID, 0, sess.QFI, datagram(dn, netip.AddrPortFrom(sess.UE, UEPort+1), payload)), bad: BadInner},
		{name: "uplink, IPv4 checksum wrong", spec: up, in: edit(forwarded(up, 1, 0, 100, 0), 14+10, 1), bad: BadChecksum},
		{name: "downlink, inner IPv4 checksum wrong", spec: down, in: edit(forwarded(down, 1, 0, 100, 0), 14+20+8+16+10, 1), bad: BadChecksum},
		{name: "uplink, truncated", spec: up, in: forwarded(up, 1, 0, 100, 0)[:14+99], bad: BadLength},
		{name: "downlink, GTP-U length lies", spec: down, in: edit(forwarded(down, 1, 0, 100, 0), 14+20+8+3, 4), bad: BadLength},
		{name: "uplink, flow beyond the table", spec: up, in: forwarded(up, 6, 0, 100, 0), bad: BadFlow},
		{name: "ARP", spec: up, in: arp(), pass: true},
		{name: "ICMP echo", spec: up, in: frame(topo.MACDNN6, topo.MACUPFN6, ip4(sess.UE, layers.IPProtocolICMPv4,
			&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0)}, gopacket.Payload(payload))), pass: true},
		{name: "UDP without a stamp", spec: up, in: frame(topo.MACDNN6, topo.MACUPFN6, datagram(dn, ue, make([]byte, 64))), pass: true},
		{name: "GTP-U Echo Request", spec: down, in: frame(topo.MACGNBN3, topo.MACUPFN3, append(datagram(netip.AddrPortFrom(down.UPF, 2152), netip.AddrPortFrom(down.GNB, 2152), nil)[:2],
			&layers.GTPv1U{Version: 1, ProtocolType: 1, MessageType: 1, SequenceNumberFlag: true, SequenceNumber: 7})), pass: true},
		{name: "G-PDU with a ping", spec: down, in: downG(sess.DownlinkTEID, 0, sess.QFI, ip4(sess.UE, layers.IPProtocolICMPv4,
			&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0)}, gopacket.Payload(payload))), pass: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newSink(t, c.spec, UPF)
			ret, out := runXDP(t, k.Program(), c.in)
			st := stats(t, k, nil)
			switch {
			case c.pass:
				if ret != xdpPass || string(out) != string(c.in) || st.Passed != 1 || st.Packets+uint64(len(st.Invalid)) != 0 {
					t.Errorf("verdict %d, stats %+v: want the frame passed untouched, and counted so", ret, st)
				}
			case c.ok:
				f := st.Flows[1]
				if ret != xdpDrop || st.Packets != 1 || st.Bytes != 100 || f.Unique != 1 || f.Bytes != 100 || len(st.Invalid) != 0 {
					t.Errorf("verdict %d, stats %+v, flow 1 %+v: want one valid 100-byte packet of flow 1", ret, st, f)
				}
			default:
				if ret != xdpDrop || st.Invalid[c.bad] != 1 || len(st.Invalid) != 1 || st.Packets != 0 {
					t.Errorf("verdict %d, invalid %v, %d valid: want one refused for %v", ret, st.Invalid, st.Packets, c.bad)
				}
			}
		})
	}
}

func arp() []byte {
	buf := gopacket.NewSerializeBuffer()
	gopacket.SerializeLayers(buf, gopacket.SerializeOptions{},
		&layers.Ethernet{DstMAC: topo.MACUPFN6, SrcMAC: topo.MACDNN6, EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: layers.ARPRequest, SourceHwAddress: topo.MACDNN6, SourceProtAddress: topo.DNN6.AsSlice(),
			DstHwAddress: make([]byte, 6), DstProtAddress: topo.UPFN6.AsSlice()})
	return buf.Bytes()
}

// A flow's sequence numbers as they arrive, and what the sink makes of them.
func TestPrivilegedSinkSequences(t *testing.T) {
	for _, c := range []struct {
		name string
		seqs []uint64
		sent uint64 // the generator's count; 0: unknown
		want FlowStats
	}{
		{"in order", []uint64{0, 1, 2, 3}, 0, FlowStats{Unique: 4, Expected: 4}},
		{"a gap is loss", []uint64{0, 1, 3, 4}, 0, FlowStats{Unique: 4, Expected: 5, Lost: 1}},
		{"loss at the end, counted against what was sent", []uint64{0, 1, 2}, 5, FlowStats{Unique: 3, Expected: 5, Lost: 2}},
		{"swapped", []uint64{0, 2, 1, 3}, 4, FlowStats{Unique: 4, Reordered: 1, Expected: 4}},
		{"duplicate", []uint64{0, 1, 1, 2}, 3, FlowStats{Unique: 3, Duplicates: 1, Expected: 3}},
		{"duplicate of a reordered one", []uint64{0, 2, 1, 1}, 3, FlowStats{Unique: 3, Reordered: 1, Duplicates: 1, Expected: 3}},
		{"a duplicate 255 back is seen", []uint64{0, 255, 0}, 0, FlowStats{Unique: 2, Duplicates: 1, Expected: 256, Lost: 254}},
		{"a jump past the window forgets it", []uint64{0, 1, 1000, 999, 1000}, 0, FlowStats{Unique: 4, Reordered: 1, Duplicates: 1, Expected: 1001, Lost: 997}},
		{"late: out of the window", []uint64{0, 300, 5}, 301, FlowStats{Unique: 3, Reordered: 1, Late: 1, Expected: 301, Lost: 298}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testSpec(Downlink, false)
			k := newSink(t, s, Wire)
			for _, q := range c.seqs {
				if ret, _ := runXDP(t, k.Program(), sent(s, 4, q, 100, 0)); ret != xdpDrop {
					t.Fatalf("seq %d: verdict %d", q, ret)
				}
			}
			sentBy := make([]uint64, s.FlowCount())
			sentBy[4] = c.sent
			if c.sent == 0 {
				sentBy = nil
			}
			got := stats(t, k, sentBy).Flows[4]
			c.want.Packets, c.want.Bytes = uint64(len(c.seqs)), 100*uint64(len(c.seqs))
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// One-way latency: the time since the stamp, in a histogram fine enough
// for percentiles within a few percent.
func TestPrivilegedSinkLatency(t *testing.T) {
	s := testSpec(Uplink, true)
	k := newSink(t, s, UPF)
	const ago = 3 * time.Millisecond
	for i := range 10 {
		now := monotonic(t)
		if ret, _ := runXDP(t, k.Program(), forwarded(s, i%s.FlowCount(), 0, 100, now-uint64(ago))); ret != xdpDrop {
			t.Fatalf("verdict %d", ret)
		}
	}
	st := stats(t, k, nil)
	l := st.Latency
	if st.Packets != 10 || l.Count != 10 || len(st.Invalid) != 0 {
		t.Fatalf("stats %+v: want 10 valid frames", st)
	}
	// the frames took no more than a millisecond to build and run
	for _, d := range []time.Duration{l.P50, l.P99, l.Max, l.Mean} {
		if d < ago*97/100 || d > ago*110/100 {
			t.Errorf("latency %+v: want all within 3%% below and 10%% above %v", l, ago)
		}
	}
}

// The histogram's buckets tile the line, each at most 1/16 of its value wide.
func TestLatencyBuckets(t *testing.T) {
	next := uint64(0)
	for b := range len(sinkSinkHist{}.Bucket) {
		lo, w := bucketRange(b)
		if lo != next || (lo >= 16 && w > lo/16) {
			t.Fatalf("bucket %d: [%d, +%d), want it to start at %d and be at most 1/16 of it wide", b, lo, w, next)
		}
		next = lo + w
	}
	if want := uint64(1) << 36; next != want {
		t.Errorf("the buckets end at %d, want %d", next, want)
	}
	var hist [528]uint64
	hist[5], hist[121] = 50, 50 // 5 ns, and [1600, 1664) ns
	l := latency(hist[:], 100, 0, 1700)
	if l.P50 != 5 || l.P99 != 1632 {
		t.Errorf("p50 %v, p99 %v: want 5ns and the middle of [1600, 1664)", l.P50, l.P99)
	}
}

func TestReasonNames(t *testing.T) {
	if n := len(sinkSinkTotals{}.Bad); n != int(numReasons) {
		t.Fatalf("the sink counts %d reasons, Go names %d", n, numReasons)
	}
	for r := range numReasons {
		if r.String() == "" || r.String() == fmt.Sprintf("reason %d", r) {
			t.Errorf("reason %d has no name", r)
		}
	}
}
