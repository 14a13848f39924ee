package datapath

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
)

// rawGTPU is a frame from the gNB whose UDP payload is exactly gtp: the
// outer lengths are right, whatever the GTP-U bytes claim.
func rawGTPU(gtp []byte) []byte {
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: addrGNB.AsSlice(), DstIP: addrN3.AsSlice()}
	udp := &layers.UDP{SrcPort: 2152, DstPort: 2152}
	udp.SetNetworkLayerForChecksum(ip)
	return serialize(eth(macN3, macGNB, false), ip, udp, gopacket.Payload(gtp))
}

// innerBytes is the IP packet of upFlow.
func innerBytes() []byte { return serialize(upFlow.layers()...) }

// rateBurst is UPF_RATE_BURST, the Echo replies and path events sent at once.
const rateBurst = 8

// maxGTPUExt is UPF_MAX_GTPU_EXT, the extension headers walked before giving up.
const maxGTPUExt = 8

// gtpHeader is a G-PDU header with the S flag and an extension chain.
func gtpHeader(flags byte, payload int, opt []byte, exts ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32([]byte{flags, 0xff, 0, 0}, teidUL)
	b = append(b, opt...)
	for _, e := range exts {
		b = append(b, e...)
	}
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)-8+payload))
	return b
}

func TestPrivilegedMalformed(t *testing.T) {
	inner := innerBytes()
	valid := append(gtpHeader(0x34, len(inner), []byte{0, 0, 0, 0x85}, []byte{1, 0x10, 9, 0}), inner...)
	with := func(gtp []byte, tail []byte) []byte { return rawGTPU(append(gtp, tail...)) }
	lying := func(patch func(b []byte)) []byte {
		b := append([]byte{}, valid...)
		patch(b)
		return rawGTPU(b)
	}
	var chain [][]byte
	for range maxGTPUExt + 1 {
		chain = append(chain, []byte{1, 0, 0, 0x40}) // each names another one after it
	}
	cases := []fixture{
		{name: "valid reference", frame: rawGTPU(valid), want: Redirected, out: decapOut(upFlow)},
		{name: "gtp version 2", frame: lying(func(b []byte) { b[0] = 0x54 }), want: Dropped, drop: DropMalformedGTPU},
		{name: "gtp prime (PT 0)", frame: lying(func(b []byte) { b[0] = 0x24 }), want: Dropped, drop: DropMalformedGTPU},
		{name: "gtp length past the datagram", frame: lying(func(b []byte) { b[3]++ }), want: Dropped, drop: DropMalformedGTPU},
		{name: "unknown gtp message type", frame: lying(func(b []byte) { b[1] = 3 }), want: Dropped, drop: DropGTPUType},
		{name: "extension of length 0", frame: lying(func(b []byte) { b[12] = 0 }), want: Dropped, drop: DropGTPUExt},
		{name: "extension chain longer than the bound",
			frame: with(gtpHeader(0x34, len(inner), []byte{0, 0, 0, 0x40}, chain...), inner), want: Dropped, drop: DropGTPUExt},
		{name: "unknown extension the receiver may skip", frame: with(gtpHeader(0x34, len(inner), []byte{0, 0, 0, 0x40},
			[]byte{1, 0, 0, 0x85}, []byte{1, 0x10, 9, 0}), inner), want: Redirected, out: decapOut(upFlow)},
		{name: "unknown extension the receiver must comprehend", frame: with(gtpHeader(0x34, len(inner), []byte{0, 0, 0, 0xc0},
			[]byte{1, 0, 0, 0}), inner), want: Dropped, drop: DropGTPUExtUnknown,
			event: &Event{Type: EventExtHeader, Iface: N3, TEID: teidUL, Peer: addrGNB}},
		{name: "extension runs past the end", frame: with(gtpHeader(0x34, 0, []byte{0, 0, 0, 0x85}), []byte{2, 0x10}),
			want: Dropped, drop: DropTruncated},
		{name: "optional fields cut off", frame: with([]byte{0x32, 0xff, 0, 0, 0, 0, 1, 0}, nil), want: Dropped, drop: DropTruncated},
		{name: "inner version 5", frame: lying(func(b []byte) { b[16] = 0x55 }), want: Dropped, drop: DropMalformedIP},
		{name: "inner header length 4", frame: lying(func(b []byte) { b[16] = 0x44 }), want: Dropped, drop: DropMalformedIP},
		{name: "inner total length lies", frame: lying(func(b []byte) { b[19]++ }), want: Dropped, drop: DropMalformedIP},
		{name: "udp length lies", frame: func() []byte {
			f := rawGTPU(valid)
			binary.BigEndian.PutUint16(f[38:], binary.BigEndian.Uint16(f[38:])+1)
			return f
		}(), want: Dropped, drop: DropMalformedIP},
		{name: "outer total length lies", frame: func() []byte {
			f := rawGTPU(valid)
			return f[:len(f)-1]
		}(), want: Dropped, drop: DropMalformedIP},
	}
	// Cut at every header boundary: inside the outer IPv4 header the frame is
	// truncated; past it, the outer total length lies.
	full := rawGTPU(valid)
	for _, n := range []int{14, 14 + 10, 14 + 20, 14 + 20 + 8, 14 + 20 + 8 + 8, 14 + 20 + 8 + 12, 14 + 20 + 8 + 16, len(full) - len(inner) + 20} {
		why := DropMalformedIP
		if n < 14+20 {
			why = DropTruncated
		}
		cases = append(cases, fixture{name: "cut at " + strconv.Itoa(n), frame: full[:n], want: Dropped, drop: why})
	}
	for i := range cases {
		cases[i].role = N3
	}
	runFixtures(t, cases)
}

func TestPrivilegedHostTraffic(t *testing.T) {
	arp := serialize(&layers.Ethernet{DstMAC: layers.EthernetBroadcast, SrcMAC: macGNB, EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: layers.ARPRequest, SourceHwAddress: macGNB, SourceProtAddress: addrGNB.AsSlice(),
			DstHwAddress: make([]byte, 6), DstProtAddress: addrN3.AsSlice()})
	ns6 := func() []byte {
		ip := &layers.IPv6{Version: 6, HopLimit: 255, NextHeader: layers.IPProtocolICMPv6,
			SrcIP: addrGNBv6.AsSlice(), DstIP: netip.MustParseAddr("ff02::1:ff00:2").AsSlice()}
		icmp := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeNeighborSolicitation, 0)}
		icmp.SetNetworkLayerForChecksum(ip)
		return serialize(eth(net.HardwareAddr{0x33, 0x33, 0xff, 0, 0, 2}, macGNB, true), ip, icmp,
			&layers.ICMPv6NeighborSolicitation{TargetAddress: addrN3v6.AsSlice()})
	}
	pfcp := gtpuFrame(macN3, macGNB, tunnel{src: addrGNB, dst: addrN3, sport: 8805}, nil)
	binary.BigEndian.PutUint16(pfcp[36:], 8805) // to the PFCP port, not GTP-U
	gtpTo := func(msg uint8) []byte {
		return gtpuFrame(macN3, macGNB, tunnel{src: addrGNB, dst: addrN3, teid: teidUL, msgType: msg, seq: u16p(1)}, nil)
	}
	lldp := serialize(&layers.Ethernet{DstMAC: net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0x0e}, SrcMAC: macGNB, EthernetType: layers.EthernetTypeLinkLayerDiscovery},
		gopacket.Payload(make([]byte, 46)))
	elsewhere := upFlow
	elsewhere.src, elsewhere.dst = addrGNB, netip.MustParseAddr("198.18.3.77")
	noUE := downFlow
	noUE.dst = netip.MustParseAddr("10.45.0.99")
	noUE6 := down6
	noUE6.dst = netip.MustParseAddr("2001:2:0:46::1")
	fromDN := func(dst netip.Addr, proto layers.IPProtocol, port uint16) []byte {
		src := addrDN
		if dst.Is6() {
			src = addrDNv6
		}
		return downlink(flow{src: src, dst: dst, proto: proto, sport: 40000, dport: port, payload: 32})
	}
	udp, tcp, icmp := layers.IPProtocolUDP, layers.IPProtocolTCP, layers.IPProtocolICMPv4
	laterFragment := fromDN(addrN6, udp, 8805)
	laterFragment[14+6], laterFragment[14+7] = 0, 0x10 // offset 128: no UDP header in it
	runFixtures(t, []fixture{
		{name: "ARP on N3", role: N3, frame: arp, want: Passed},
		{name: "ARP on N6", role: N6, frame: arp, want: Passed},
		{name: "neighbour solicitation on N3", role: N3, frame: ns6(), want: Passed},
		{name: "PFCP to the N3 address", role: N3, frame: pfcp, want: Passed},
		{name: "echo response to the daemon", role: N3, frame: gtpTo(2), want: Passed},
		{name: "error indication to the daemon", role: N3, frame: gtpTo(26), want: Passed},
		{name: "end marker to the daemon", role: N3, frame: gtpTo(254), want: Passed},
		{name: "N3 traffic for another host", role: N3, frame: ipFrame(macN3, macGNB, elsewhere), want: Dropped, drop: DropNotLocal},
		{name: "LLDP", role: N3, frame: lldp, want: Dropped, drop: DropUnsupported},
		{name: "N6 to an address of no session", role: N6, frame: downlink(noUE), want: Dropped, drop: DropNoSession},
		{name: "N6 to an IPv6 prefix of no session", role: N6, frame: downlink(noUE6), want: Dropped, drop: DropNoSession},
		// The data network reaches the N6 device's own addresses, and at
		// them none of upfd's sockets.
		{name: "N6 UDP to the N6 address", role: N6, frame: fromDN(addrN6, udp, 5001), want: Passed},
		{name: "N6 TCP to the N6 address", role: N6, frame: fromDN(addrN6, tcp, 22), want: Passed},
		{name: "N6 ICMP to the N6 address", role: N6, frame: fromDN(addrN6, icmp, 0), want: Passed},
		{name: "N6 UDP to the N6 IPv6 address", role: N6, frame: fromDN(addrN6v6, udp, 5001), want: Passed},
		{name: "N6 later IPv4 fragment to the N6 address", role: N6, frame: laterFragment, want: Passed},
		{name: "neighbour solicitation on N6", role: N6, frame: ns6(), want: Passed},
		{name: "N6 PFCP to the N6 address", role: N6, frame: fromDN(addrN6, udp, 8805), want: Dropped, drop: DropDNToHost},
		{name: "N6 GTP-U to the N6 address", role: N6, frame: fromDN(addrN6, udp, 2152), want: Dropped, drop: DropDNToHost},
		{name: "N6 to the API port", role: N6, frame: fromDN(addrN6, tcp, 8080), want: Dropped, drop: DropDNToHost},
		{name: "N6 to the metrics port", role: N6, frame: fromDN(addrN6, tcp, 9090), want: Dropped, drop: DropDNToHost},
		{name: "N6 IPv6 to the PFCP port", role: N6, frame: fromDN(addrN6v6, udp, 8805), want: Dropped, drop: DropDNToHost},
		{name: "N6 IPv6 extension header to the N6 address", role: N6,
			frame: fromDN(addrN6v6, layers.IPProtocolIPv6Destination, 0), want: Dropped, drop: DropDNToHost},
		{name: "N6 GTP-U to the N3 address", role: N6, frame: fromDN(addrN3, udp, 2152), want: Dropped, drop: DropDNToHost},
		{name: "N6 ICMP to the N3 address", role: N6, frame: fromDN(addrN3, icmp, 0), want: Dropped, drop: DropDNToHost},
		{name: "N6 to the N3 IPv6 address", role: N6, frame: fromDN(addrN3v6, udp, 5001), want: Dropped, drop: DropDNToHost},
		{name: "N6 to the N9 address", role: N6, frame: fromDN(addrN9, tcp, 22), want: Dropped, drop: DropDNToHost},
	})
}

func TestPrivilegedEcho(t *testing.T) {
	req := func(src, dst netip.Addr) []byte {
		return gtpuFrame(macN3, macGNB, tunnel{src: src, dst: dst, msgType: 1, seq: u16p(0x4242), sport: 40000}, nil)
	}
	resp := func(src, dst netip.Addr) []byte {
		g := &layers.GTPv1U{Version: 1, ProtocolType: 1, MessageType: 2, SequenceNumberFlag: true, SequenceNumber: 0x4242}
		var ip gopacket.NetworkLayer
		var l3 gopacket.SerializableLayer
		if src.Is4() {
			v4 := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
			ip, l3 = v4, v4
		} else {
			v6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
			ip, l3 = v6, v6
		}
		udp := &layers.UDP{SrcPort: 2152, DstPort: 40000}
		udp.SetNetworkLayerForChecksum(ip)
		b := serialize(eth(macGNB, macN3, src.Is6()), l3, udp, g, gopacket.Payload{14, 0})
		if src.Is4() {
			binary.BigEndian.PutUint16(b[14+20+6:], 0)
			return b[:14+20+8+14] // the datapath does not pad to 60 bytes
		}
		return b
	}
	// A burst, then one reply per interval per CPU: a flood of requests gets
	// no flood back.
	// The ten requests run on one CPU: the thread is held to it.
	t.Run("requests within the interval", func(t *testing.T) {
		ns := testenv.UPF(t)
		d := loadIn(t, ns, Options{EventInterval: time.Hour})
		before, err := d.Stats()
		if err != nil {
			t.Fatal(err)
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var was, one unix.CPUSet
		if err := unix.SchedGetaffinity(0, &was); err != nil {
			t.Fatal(err)
		}
		one.Set(0)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Fatal(err)
		}
		sequence(t, d, ns, N3, req(addrGNB, addrN3), 10)
		if err := unix.SchedSetaffinity(0, &was); err != nil {
			t.Fatal(err)
		}
		after, err := d.Stats()
		if err != nil {
			t.Fatal(err)
		}
		sent := after.Verdicts[Transmitted] - before.Verdicts[Transmitted]
		if drops := diffDrops(before, after); sent != rateBurst || len(drops) != 1 || drops[DropEchoLimited] != 10-rateBurst {
			t.Errorf("%d replies and drops %v, want %d replies and %d %s", sent, drops, rateBurst, 10-rateBurst, DropEchoLimited)
		}
	})
	runFixtures(t, []fixture{
		{name: "echo request over IPv4", role: N3, frame: req(addrGNB, addrN3), want: Transmitted, out: resp(addrN3, addrGNB)},
		{name: "echo request over IPv6", role: N3, frame: req(addrGNBv6, addrN3v6), want: Transmitted, out: resp(addrN3v6, addrGNBv6)},
	})
}

// sequence runs the same frame n times and returns the verdicts.
func sequence(t *testing.T, d *Datapath, ns string, role Role, frame []byte, n int) []Verdict {
	var vs []Verdict
	for range n {
		v, _ := runXDP(t, d, ns, role, frame)
		vs = append(vs, v)
	}
	return vs
}

// No byte passes a volume quota: a packet it has too little left for is
// dropped, whether the quota is spent to the byte or not.
func TestPrivilegedQuota(t *testing.T) {
	size := uint64(len(innerBytes()))
	for _, c := range []struct {
		name  string
		quota uint64
	}{
		{"spent to the byte", 2 * size},
		{"too little left for the third", 2*size + 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := testenv.UPF(t)
			d := loadIn(t, ns, Options{})
			if err := d.Apply(append(baseSession(), PutURR{ID: 1, URR: URR{HasQuota: true, Quota: c.quota}})); err != nil {
				t.Fatal(err)
			}
			events, err := d.Events()
			if err != nil {
				t.Fatal(err)
			}
			defer events.Close()
			got := sequence(t, d, ns, N3, uplink(ulTunnel, upFlow), 4)
			if want := []Verdict{Redirected, Redirected, Dropped, Dropped}; !slices.Equal(got, want) {
				t.Errorf("verdicts %v, want %v: two packets fit the quota of %d bytes", got, want, c.quota)
			}
			u, _ := d.Usage(1)
			if u.Uplink != (Traffic{2, 2 * size}) || u.Downlink != (Traffic{}) {
				t.Errorf("usage %+v, want 2 uplink packets of %d bytes", u, size)
			}
			ev, err := events.Read(time.Now().Add(100 * time.Millisecond))
			if err != nil || ev.Type != EventQuota || ev.ID != 1 || ev.Session != 1 {
				t.Errorf("event %+v (%v), want one quota event for urr 1", ev, err)
			}
			if ev, err := events.Read(time.Now().Add(50 * time.Millisecond)); err == nil {
				t.Errorf("second event %+v: the quota is reported once", ev)
			}
		})
	}
}

// A packet that one of its PDR's quotas refuses is dropped and takes
// nothing from the other: with the fast path and without. The first packet
// fills the next-hop cache, which the fast path needs for the second.
func TestPrivilegedQuotaRefusalGivesBack(t *testing.T) {
	size := uint64(len(innerBytes()))
	psc := tunnel{src: addrGNB, dst: addrN3, teid: teidUL, qfi: qfiDef, pduType: 1}
	for _, opts := range []Options{{}, {NoFastPath: true}} {
		t.Run(fmt.Sprintf("NoFastPath=%v", opts.NoFastPath), func(t *testing.T) {
			ns := testenv.UPF(t)
			d := loadIn(t, ns, opts)
			ul := PDR{ID: 1, Src: Access, OHR: OHRGTPUIP, FARID: 1, URRIDs: [2]uint32{1, 2}}
			if err := d.Apply(append(baseSession(),
				PutURR{ID: 1, URR: URR{HasQuota: true, Quota: 10 * size}},
				PutURR{ID: 2, URR: URR{HasQuota: true, Quota: size / 2}},
				PutUplink{UplinkKey{teidUL, epN3}, Rules{Session: 1, PDRs: []PDR{ul}}})); err != nil {
				t.Fatal(err)
			}
			got := sequence(t, d, ns, N3, uplink(psc, upFlow), 2)
			if want := []Verdict{Dropped, Dropped}; !slices.Equal(got, want) {
				t.Errorf("verdicts %v, want %v: URR 2's quota is less than a packet", got, want)
			}
			if left, _ := d.QuotaLeft(1); left != int64(10*size) {
				t.Errorf("URR 1's quota left %d, want %d: a refused packet takes nothing", left, 10*size)
			}
		})
	}
}

// A packet the datapath cannot hand to an egress device (here the FIB
// sends it out a device that is not the UPF's, so the redirect is refused)
// is not counted, and gives back the quota it took.
func TestPrivilegedUsageCountsOnlyWhatLeaves(t *testing.T) {
	ns := testenv.UPF(t)
	testenv.Sh(t, "ip", "-n", ns, "route", "add", "198.18.77.0/24", "dev", "n3p")
	testenv.Sh(t, "ip", "-n", ns, "neigh", "replace", "198.18.77.1", "lladdr", testenv.MACPeer.String(), "dev", "n3p", "nud", "permanent")
	d := loadIn(t, ns, Options{})
	size := uint64(len(innerBytes()))
	if err := d.Apply(append(baseSession(), PutURR{ID: 1, URR: URR{HasQuota: true, Quota: 10 * size}})); err != nil {
		t.Fatal(err)
	}
	away := upFlow
	away.dst = netip.MustParseAddr("198.18.77.1")
	before, _ := d.Stats()
	for _, f := range []flow{away, away, upFlow} {
		runXDP(t, d, ns, N3, uplink(ulTunnel, f))
	}
	after, _ := d.Stats()
	if got := diffDrops(before, after); got[DropRedirect] != 2 {
		t.Fatalf("drops %v, want the two packets for 198.18.77.1 refused at the redirect", got)
	}
	if u, _ := d.Usage(1); u.Uplink != (Traffic{1, size}) {
		t.Errorf("usage %+v, want the one packet that left", u.Uplink)
	}
	if left, _ := d.QuotaLeft(1); left != int64(9*size) {
		t.Errorf("quota left %d, want %d: only the packet that left takes from it", left, 9*size)
	}
}

func TestPrivilegedMBR(t *testing.T) {
	ns := testenv.UPF(t)
	d := loadIn(t, ns, Options{MBRBurst: 5 * time.Millisecond})
	// 8 kbit/s: one 92-byte packet buys 92 ms, far past the 5 ms burst.
	ops := append(baseSession(), PutQER{ID: 2, QER: QER{MBRUplink: 8000}},
		uplinkPDRs(PDR{ID: 1, Src: Access, OHR: OHRGTPUv4, FARID: 1, QERIDs: [2]uint32{2}, URRIDs: [2]uint32{1}}))
	if err := d.Apply(ops); err != nil {
		t.Fatal(err)
	}
	got := sequence(t, d, ns, N3, uplink(ulTunnel, upFlow), 3)
	if want := []Verdict{Redirected, Dropped, Dropped}; !slices.Equal(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	s, _ := d.Stats()
	if s.Drops[DropMBR] != 2 {
		t.Errorf("mbr drops %d, want 2", s.Drops[DropMBR])
	}
	// The downlink MBR is unlimited and unaffected.
	got = sequence(t, d, ns, N6, downlink(downFlow), 3)
	if want := []Verdict{Redirected, Redirected, Redirected}; !slices.Equal(got, want) {
		t.Errorf("downlink verdicts %v, want %v", got, want)
	}
}

// By default a QER lets a flow run 200 ms ahead of its MBR, what TCP's
// shortest retransmission timeout needs: at 8 kbit/s a 92-byte packet
// costs 92 ms, so three in a row pass (0, 92 and 184 ms ahead), each
// decapsulated as without a QER, and the fourth, 276 ms ahead, is dropped.
func TestPrivilegedMBRDefaultBurst(t *testing.T) {
	ns := testenv.UPF(t)
	d := loadIn(t, ns, Options{})
	ops := append(baseSession(), PutQER{ID: 2, QER: QER{MBRUplink: 8000}},
		uplinkPDRs(PDR{ID: 1, Src: Access, OHR: OHRGTPUv4, FARID: 1, QERIDs: [2]uint32{2}, URRIDs: [2]uint32{1}}))
	if err := d.Apply(ops); err != nil {
		t.Fatal(err)
	}
	frame := uplink(ulTunnel, upFlow)
	for i, want := range []Verdict{Redirected, Redirected, Redirected, Dropped} {
		v, out := runXDP(t, d, ns, N3, frame)
		if v != want {
			t.Errorf("packet %d: verdict %v, want %v", i, v, want)
		}
		if v == Redirected && !bytes.Equal(out, decapOut(upFlow)) {
			t.Errorf("packet %d: sent %x, want %x", i, out, decapOut(upFlow))
		}
	}
	if s, _ := d.Stats(); s.Drops[DropMBR] != 1 {
		t.Errorf("mbr drops %d, want 1", s.Drops[DropMBR])
	}
}

// The cache's lifetime in jiffies: never shorter than asked, at most a tick
// longer, and 0 (no cache) only when asked.
func TestNextHopTTLJiffies(t *testing.T) {
	var res unix.Timespec
	if err := unix.ClockGetres(unix.CLOCK_MONOTONIC_COARSE, &res); err != nil {
		t.Fatal(err)
	}
	tick := time.Duration(res.Nano())
	for _, c := range []struct {
		ttl  time.Duration
		want uint64
	}{
		{-1, 0},
		{0, uint64((50*time.Millisecond + tick - 1) / tick)},
		{1, 1},
		{tick, 1},
		{tick + 1, 2},
		{10 * tick, 10},
	} {
		if got, err := nextHopTTLJiffies(c.ttl); err != nil || got != c.want {
			t.Errorf("TTL %v (tick %v): %d jiffies, %v; want %d", c.ttl, tick, got, err, c.want)
		}
	}
}

func TestPrivilegedNextHopCache(t *testing.T) {
	ns := testenv.UPF(t)
	d := loadIn(t, ns, Options{NextHopTTL: 20 * time.Millisecond})
	if err := d.Apply(baseSession()); err != nil {
		t.Fatal(err)
	}
	big := downFlow
	big.payload = 1500 - 20 - 8 - 16 - 20 - 8 + 1
	fits := big
	fits.payload--
	for _, step := range []struct {
		name string
		f    flow
		want Verdict
	}{
		{"small packet warms the cache", downFlow, Redirected},
		{"too large still dropped with a warm cache", big, Dropped},
		{"largest that fits", fits, Redirected},
		{"too large after the largest that fits", big, Dropped},
	} {
		if v, _ := runXDP(t, d, ns, N6, downlink(step.f)); v != step.want {
			t.Errorf("%s: verdict %d, want %d", step.name, v, step.want)
		}
	}
	s, _ := d.Stats()
	if s.Drops[DropMTU] != 2 {
		t.Errorf("mtu drops %d, want 2", s.Drops[DropMTU])
	}

	// A new neighbour MAC shows once the cached next hop expires.
	moved := net.HardwareAddr{2, 0, 0, 0, 3, 0x99}
	testenv.Sh(t, "ip", "-n", ns, "neigh", "replace", "198.18.3.1", "lladdr", moved.String(), "dev", "n3", "nud", "permanent")
	time.Sleep(30 * time.Millisecond)
	_, out := runXDP(t, d, ns, N6, downlink(downFlow))
	if want := encapOut(moved, macN3, addrN3, addrGNB, teidDL, qfiDef, downFlow); !bytes.Equal(out, want) {
		t.Errorf("after the neighbour moved, sent to %x, want %x", out[:6], moved)
	}
}

// The MBR holds over time: offered far above it for 400 ms, the bytes
// admitted are the MBR's worth plus at most the burst (5 ms and a tick).
func TestPrivilegedMBRRate(t *testing.T) {
	ns := testenv.UPF(t)
	const tolerance = 5 * time.Millisecond // the MBR burst
	d := loadIn(t, ns, Options{MBRBurst: tolerance})
	const mbr = 10e6 // bit/s
	ops := append(baseSession(), PutQER{ID: 2, QER: QER{MBRUplink: mbr}},
		uplinkPDRs(PDR{ID: 1, Src: Access, OHR: OHRGTPUv4, FARID: 1, QERIDs: [2]uint32{2}, URRIDs: [2]uint32{1}}))
	if err := d.Apply(ops); err != nil {
		t.Fatal(err)
	}
	frame := uplink(ulTunnel, upFlow)
	// Offered well above the MBR: one namespace switch for the whole
	// loop, not one a frame, which alone held the offer near 10 Mbit/s.
	// The MBR runs on the coarse clock. When that clock jumps by more than
	// the burst tolerance (the test descheduled, or the tick stalled on a
	// VM whose CPUs are stolen), the allowance beyond it is forfeit, so the
	// least admitted counts only the time the clock moved smoothly.
	var elapsed, jumped time.Duration
	err := netns.Do(ns, func() error {
		md := xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(d.ifaces[N3].Index)}
		start := coarseNow()
		last := start
		for n := 0; n < 400_000 && last-start < 400*time.Millisecond; n++ {
			if _, err := d.Program(N3).Run(&ebpf.RunOptions{Data: frame, Context: md}); err != nil {
				return err
			}
			now := coarseNow()
			jumped += max(0, now-last-tolerance)
			last = now
		}
		elapsed = last - start
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := d.Usage(1)
	allowed := mbr / 8 * elapsed.Seconds()
	least := mbr / 8 * (elapsed - jumped).Seconds()
	burst := mbr / 8 * (tolerance.Seconds() + 0.004 + 0.004) // a tick at each end
	if got := float64(u.Uplink.Bytes); got > allowed+burst || got < 0.8*least {
		t.Errorf("admitted %.0f bytes in %v (clock jumps %v) at %g bit/s: want %.0f (+%.0f burst), at least %.0f",
			got, elapsed, jumped, mbr, allowed, burst, 0.8*least)
	}
}

// coarseNow is the clock the MBR reads (bpf_ktime_get_coarse_ns).
func coarseNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC_COARSE, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}
