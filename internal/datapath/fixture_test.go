package datapath

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// The fixtures' session: uplink on TEID 0x100 (N3, IPv4) to N6, downlink
// to UE 10.45.0.2 and prefix 2001:2:0:45::/64 into TEID 0x200 at the gNB,
// QFI 9. URR 1 counts both directions.
const (
	teidUL = 0x100
	teidDL = 0x200
	qfiDef = 9
)

func baseSession() []Op {
	ul := PDR{ID: 1, Src: Access, OHR: OHRGTPUIP, FARID: 1, URRIDs: [2]uint32{1}}
	dl := PDR{ID: 2, Src: Core, FARID: 2, QERIDs: [2]uint32{1}, URRIDs: [2]uint32{1}}
	return []Op{
		PutFAR{ID: 1, FAR: FAR{Action: Forw}},
		PutFAR{ID: 2, FAR: FAR{Action: Forw, TEID: teidDL, Peer: addrGNB, Local: addrN3}},
		PutQER{ID: 1, QER: QER{QFI: qfiDef}},
		PutURR{ID: 1, URR: URR{}},
		PutUplink{UplinkKey{teidUL, epN3}, Rules{Session: 1, PDRs: []PDR{ul}}},
		PutUplink{UplinkKey{teidUL, epN3v6}, Rules{Session: 1, PDRs: []PDR{ul}}},
		PutDownlink{netip.PrefixFrom(addrUE, 32), Rules{Session: 1, PDRs: []PDR{dl}}},
		PutDownlink{prefixUE6, Rules{Session: 1, PDRs: []PDR{dl}}},
	}
}

var (
	upFlow   = flow{src: addrUE, dst: addrDN, sport: 40000, dport: 5001, payload: 64}
	upFlow6  = flow{src: addrUE6, dst: addrDNv6, sport: 40000, dport: 5001, payload: 64}
	downFlow = flow{src: addrDN, dst: addrUE, sport: 5001, dport: 40000, payload: 64}
	down6    = flow{src: addrDNv6, dst: addrUE6, sport: 5001, dport: 40000, payload: 64}
	ulTunnel = tunnel{src: addrGNB, dst: addrN3, teid: teidUL}
)

// uplink is a G-PDU from the gNB carrying f.
func uplink(tn tunnel, f flow) []byte { return gtpuFrame(macN3, macGNB, tn, f.layers()) }

// downlink is an IP packet from the DN router carrying f.
func downlink(f flow) []byte { return ipFrame(macN6, macRouter, f) }

type fixture struct {
	name  string
	ops   []Op // applied after baseSession
	then  []Op // applied after ops, in a second batch
	role  Role
	frame []byte
	want  Verdict
	out   []byte            // the frame sent (Redirected, Transmitted); nil: not checked
	drop  DropReason        // the counted reason (Dropped)
	usage map[uint32]uint64 // URR ID -> packets counted afterwards
	event *Event            // the one event expected (Frame compared too)
}

func runFixtures(t *testing.T, cases []fixture) {
	ns := testenv.UPF(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := loadIn(t, ns, Options{})
			if err := d.Apply(append(baseSession(), c.ops...)); err != nil {
				t.Fatal(err)
			}
			if err := d.Apply(c.then); err != nil {
				t.Fatal(err)
			}
			c.check(t, d, ns)
		})
	}
}

func (c fixture) check(t *testing.T, d *Datapath, ns string) {
	t.Helper()
	events, err := d.Events()
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	before, err := d.Stats()
	if err != nil {
		t.Fatal(err)
	}
	verdict, out := runXDP(t, d, ns, c.role, c.frame)
	after, err := d.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if verdict != c.want {
		t.Errorf("verdict %d, want %d (drops %v)", verdict, c.want, diffDrops(before, after))
	}
	if after.Verdicts[verdict]-before.Verdicts[verdict] != 1 {
		t.Errorf("verdict %d counted %d times", verdict, after.Verdicts[verdict]-before.Verdicts[verdict])
	}
	if c.want == Dropped {
		if got := diffDrops(before, after); len(got) != 1 || got[c.drop] != 1 {
			t.Errorf("drops %v, want one %s", got, c.drop)
		}
	}
	if c.out != nil && !bytes.Equal(out, c.out) {
		t.Errorf("frame sent:\n%s\nwant:\n%s", hex.Dump(out), hex.Dump(c.out))
	}
	if c.want == Passed && !bytes.Equal(out, c.frame) {
		t.Errorf("frame passed to the kernel was altered:\n%s", hex.Dump(out))
	}
	for id, want := range c.usage {
		u, err := d.Usage(id)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.Total().Packets; got != want {
			t.Errorf("urr %d counted %d packets, want %d", id, got, want)
		}
	}
	ev, err := events.Read(time.Now().Add(50 * time.Millisecond))
	switch {
	case c.event == nil && err == nil:
		t.Errorf("unexpected event %+v", ev)
	case c.event != nil && err != nil:
		t.Errorf("no event, want %+v: %v", *c.event, err)
	case c.event != nil:
		c.event.Ifindex = ev.Ifindex // the device's index is the namespace's business
		if !reflect.DeepEqual(ev, *c.event) {
			t.Errorf("event\n%+v\nwant\n%+v", ev, *c.event)
		}
	}
}

func diffDrops(before, after Stats) map[DropReason]uint64 {
	d := map[DropReason]uint64{}
	for r, n := range after.Drops {
		if n != before.Drops[r] {
			d[r] = n - before.Drops[r]
		}
	}
	return d
}

func TestPrivilegedForwarding(t *testing.T) {
	seq := uint16(0x1234)
	vlanUp := func() []byte {
		// the same G-PDU behind an 802.1Q tag
		f := uplink(ulTunnel, upFlow)
		return append(append(append([]byte{}, f[:12]...), 0x81, 0x00, 0x00, 0x64), f[12:]...)
	}
	n9Rules := []Op{
		PutFAR{ID: 3, FAR: FAR{Action: Forw, TEID: 0x900, Peer: addrPeer, Local: addrN9}},
		PutUplink{UplinkKey{0x300, epN3}, Rules{Session: 2, PDRs: []PDR{{ID: 1, Src: Access, OHR: OHRGTPUv4, FARID: 3}}}},
	}
	runFixtures(t, []fixture{
		{name: "uplink decap", role: N3, frame: uplink(ulTunnel, upFlow), want: Redirected, out: decapOut(upFlow)},
		{name: "uplink decap with sequence number", role: N3,
			frame: uplink(tunnel{src: addrGNB, dst: addrN3, teid: teidUL, seq: &seq}, upFlow),
			want:  Redirected, out: decapOut(upFlow)},
		{name: "uplink decap with PDU Session Container", role: N3,
			frame: uplink(tunnel{src: addrGNB, dst: addrN3, teid: teidUL, qfi: 9, pduType: 1}, upFlow),
			want:  Redirected, out: decapOut(upFlow)},
		{name: "uplink decap past an unknown extension header", role: N3,
			frame: uplink(tunnel{src: addrGNB, dst: addrN3, teid: teidUL, qfi: 9, pduType: 1,
				exts: []layers.GTPExtensionHeader{{Type: 0x40, Content: []byte{0x08, 0x68}}}}, upFlow),
			want: Redirected, out: decapOut(upFlow)},
		{name: "uplink behind a VLAN tag", role: N3, frame: vlanUp(), want: Redirected, out: decapOut(upFlow)},
		{name: "uplink over IPv6 transport", role: N3,
			frame: uplink(tunnel{src: addrGNBv6, dst: addrN3v6, teid: teidUL}, upFlow),
			want:  Redirected, out: decapOut(upFlow)},
		{name: "uplink IPv6 PDU", role: N3, frame: uplink(ulTunnel, upFlow6), want: Redirected, out: decapOut(upFlow6)},
		{name: "downlink encap with QFI", role: N6, frame: downlink(downFlow), want: Redirected,
			out: encapOut(macGNB, macN3, addrN3, addrGNB, teidDL, qfiDef, downFlow)},
		{name: "downlink encap without QER has no container",
			ops:  []Op{PutDownlink{netip.PrefixFrom(addrUE, 32), Rules{Session: 1, PDRs: []PDR{{ID: 2, Src: Core, FARID: 2}}}}},
			role: N6, frame: downlink(downFlow), want: Redirected,
			out: encapOut(macGNB, macN3, addrN3, addrGNB, teidDL, 0, downFlow)},
		{name: "downlink IPv6 PDU by prefix", role: N6, frame: downlink(down6), want: Redirected,
			out: encapOut(macGNB, macN3, addrN3, addrGNB, teidDL, qfiDef, down6)},
		{name: "downlink over IPv6 transport with UDP checksum",
			ops:  []Op{PutFAR{ID: 2, FAR: FAR{Action: Forw, TEID: teidDL, Peer: addrGNBv6, Local: addrN3v6}}},
			role: N6, frame: downlink(downFlow), want: Redirected,
			out: encapOut(macGNB, macN3, addrN3v6, addrGNBv6, teidDL, qfiDef, downFlow)},
		{name: "downlink tunnel from an address that is no GTP-U endpoint",
			ops:  []Op{PutFAR{ID: 2, FAR: FAR{Action: Forw, TEID: teidDL, Peer: addrGNB, Local: addrN6}}},
			role: N6, frame: downlink(downFlow), want: Redirected,
			out: encapOut(macGNB, macN3, addrN6, addrGNB, teidDL, qfiDef, downFlow)},
		{name: "downlink entry put again without its FAR, in a later batch",
			then: []Op{PutDownlink{netip.PrefixFrom(addrUE, 32), Rules{Session: 1, PDRs: []PDR{{ID: 2, Src: Core, FARID: 2, QERIDs: [2]uint32{1}}}}}},
			role: N6, frame: downlink(downFlow), want: Redirected,
			out: encapOut(macGNB, macN3, addrN3, addrGNB, teidDL, qfiDef, downFlow)},
		{name: "downlink RQI marked", ops: []Op{PutQER{ID: 1, QER: QER{QFI: 5, RQI: true}}}, role: N6, frame: downlink(downFlow),
			want: Redirected, out: gtpuFrame(macGNB, macN3, tunnel{src: addrN3, dst: addrGNB, teid: teidDL, qfi: 5, rqi: true, df: true, zeroUDP: true}, routed(downFlow).layers())},
		{name: "transport level marking", ops: []Op{PutFAR{ID: 2, FAR: FAR{Action: Forw, TEID: teidDL, Peer: addrGNB, Local: addrN3, TOS: 0xb8, HasTOS: true}}},
			role: N6, frame: downlink(downFlow), want: Redirected, out: withTOS(encapOut(macGNB, macN3, addrN3, addrGNB, teidDL, qfiDef, downFlow), 0xb8)},
		{name: "N9 relay: decap and encap toward the next UPF", ops: n9Rules, role: N3,
			frame: uplink(tunnel{src: addrGNB, dst: addrN3, teid: 0x300}, upFlow), want: Redirected,
			out: encapOut(macPeer, macN9, addrN9, addrPeer, 0x900, 0, upFlow)},
	})
}

// withTOS sets the outer IPv4 ToS of a frame and fixes its checksum.
func withTOS(frame []byte, tos uint8) []byte {
	frame[15] = tos
	frame[24], frame[25] = 0, 0
	var sum uint32
	for i := 14; i < 34; i += 2 {
		sum += uint32(frame[i])<<8 | uint32(frame[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	frame[24], frame[25] = byte(^sum>>8), byte(^sum)
	return frame
}
