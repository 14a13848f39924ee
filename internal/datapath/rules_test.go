package datapath

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// uplinkPDRs replaces session 1's uplink rules.
func uplinkPDRs(pdrs ...PDR) Op {
	return PutUplink{UplinkKey{teidUL, epN3}, Rules{Session: 1, PDRs: pdrs, ListID: 1}}
}

func sdfPDR(f SDF) PDR {
	return PDR{ID: 7, Src: Access, OHR: OHRGTPUv4, FARID: 1, Filter: f, SDFID: 7, URRIDs: [2]uint32{7}}
}

// precedence32 is 32 uplink PDRs: PDR i matches destination port 6000+i
// and counts in URR 10+i; with catchAll the last matches anything.
func precedence32(catchAll bool) []Op {
	var ops []Op
	var pdrs []PDR
	for i := range uint32(MaxPDRs) {
		p := PDR{ID: uint16(i + 1), Src: Access, OHR: OHRGTPUv4, FARID: 1, URRIDs: [2]uint32{10 + i}}
		if i < MaxPDRs-1 || !catchAll {
			port := uint16(6000 + i)
			p.Filter = SDF{DstPorts: PortRange{port, port}}
		}
		ops = append(ops, PutURR{ID: 10 + i, URR: URR{}})
		pdrs = append(pdrs, p)
	}
	return append(ops, uplinkPDRs(pdrs...))
}

func withPort(f flow, port uint16) flow { f.dport = port; return f }

// neighbourLists are lists in neighbouring runs of the list table: another
// tunnel's three PDRs in slots 1-2, session 1's two in slot 3, each port
// filters that miss and a catch-all counting in its own URR.
func neighbourLists() []Op {
	list := func(id uint16, misses int, urr uint32) []PDR {
		var pdrs []PDR
		for i := range misses {
			pdrs = append(pdrs, PDR{ID: id + uint16(i), Src: Access, OHR: OHRGTPUv4, FARID: 1, Filter: SDF{DstPorts: PortRange{1, 1}}})
		}
		return append(pdrs, PDR{ID: id + uint16(misses), Src: Access, OHR: OHRGTPUv4, FARID: 1, URRIDs: [2]uint32{urr}})
	}
	return []Op{PutURR{ID: 20, URR: URR{}}, PutURR{ID: 21, URR: URR{}},
		PutUplink{UplinkKey{teidUL + 1, epN3}, Rules{Session: 2, PDRs: list(10, 2, 20), ListID: 1}},
		PutUplink{UplinkKey{teidUL, epN3}, Rules{Session: 1, PDRs: list(20, 1, 21), ListID: 3}}}
}

// firstOfTwo is an uplink list of two: f's PDR, counting in URR 30, then a
// catch-all counting in URR 31. The first is the lookup entry's inline one.
func firstOfTwo(f SDF) []Op {
	return []Op{PutURR{ID: 30, URR: URR{}}, PutURR{ID: 31, URR: URR{}}, uplinkPDRs(
		PDR{ID: 1, Src: Access, OHR: OHRGTPUv4, FARID: 1, Filter: f, SDFID: 7, URRIDs: [2]uint32{30}},
		PDR{ID: 2, Src: Access, OHR: OHRGTPUv4, FARID: 1, URRIDs: [2]uint32{31}})}
}

// entryOfAnEarlierBuild rewrites the uplink lookup entry as builds before
// the inline first PDR wrote a list's: no PDR and no FAR in it, which a
// take-over of the pinned maps leaves in place.
type entryOfAnEarlierBuild struct{}

func (entryOfAnEarlierBuild) phase() int     { return phaseLookups }
func (entryOfAnEarlierBuild) String() string { return "an earlier build's uplink entry" }
func (entryOfAnEarlierBuild) apply(d *Datapath) error {
	key := bpfUpfFteidKey{Teid: beWord(teidUL), Ep: epN3}
	var v bpfUpfRules
	if err := d.objs.UlTeids.Lookup(&key, &v); err != nil {
		return err
	}
	v.Pdr, v.Far, v.FarInline, v.LocalEp = bpfUpfPdr{}, bpfUpfFarInline{}, 0, 0
	return d.objs.UlTeids.Put(&key, &v)
}

func TestPrivilegedRules(t *testing.T) {
	tcp := upFlow
	tcp.proto = layers.IPProtocolTCP
	tos := upFlow
	tos.tos = 0xb9
	qfiTunnel := func(q uint8) tunnel {
		return tunnel{src: addrGNB, dst: addrN3, teid: teidUL, qfi: q, pduType: 1}
	}
	sdf := func(s SDF) []Op { return []Op{PutURR{ID: 7, URR: URR{}}, uplinkPDRs(sdfPDR(s))} }
	ok := decapOut(upFlow)
	runFixtures(t, []fixture{
		{name: "first of 32 PDRs", ops: precedence32(true), role: N3, frame: uplink(ulTunnel, withPort(upFlow, 6000)),
			want: Redirected, out: decapOut(withPort(upFlow, 6000)), usage: map[uint32]uint64{10: 1, 11: 0, 41: 0}},
		{name: "middle of 32 PDRs", ops: precedence32(true), role: N3, frame: uplink(ulTunnel, withPort(upFlow, 6015)),
			want: Redirected, usage: map[uint32]uint64{10: 0, 25: 1, 41: 0}},
		{name: "17th of 32 PDRs, first of its pair", ops: precedence32(true), role: N3, frame: uplink(ulTunnel, withPort(upFlow, 6016)),
			want: Redirected, usage: map[uint32]uint64{25: 0, 26: 1, 27: 0}},
		{name: "last of 32 PDRs", ops: precedence32(true), role: N3, frame: uplink(ulTunnel, withPort(upFlow, 7000)),
			want: Redirected, usage: map[uint32]uint64{10: 0, 40: 0, 41: 1}},
		{name: "none of 32 PDRs", ops: precedence32(false), role: N3, frame: uplink(ulTunnel, withPort(upFlow, 7000)),
			want: Dropped, drop: DropNoPDR},
		{name: "a list of two in the slot after a list of three", ops: neighbourLists(), role: N3, frame: uplink(ulTunnel, upFlow),
			want: Redirected, out: ok, usage: map[uint32]uint64{20: 0, 21: 1}},
		{name: "first of two, the UE's address, matches", ops: firstOfTwo(SDF{Src: netip.PrefixFrom(addrUE, 32)}), role: N3,
			frame: uplink(ulTunnel, upFlow), want: Redirected, out: ok, usage: map[uint32]uint64{30: 1, 31: 0}},
		{name: "first of two, the UE's address, differs", ops: firstOfTwo(SDF{Src: netip.MustParsePrefix("10.46.0.1/32")}), role: N3,
			frame: uplink(ulTunnel, upFlow), want: Redirected, out: ok, usage: map[uint32]uint64{30: 0, 31: 1}},
		{name: "first of two, in an earlier build's entry", ops: firstOfTwo(SDF{Src: netip.PrefixFrom(addrUE, 32)}),
			then: []Op{entryOfAnEarlierBuild{}}, role: N3, frame: uplink(ulTunnel, upFlow), want: Redirected, out: ok,
			usage: map[uint32]uint64{30: 1, 31: 0}},
		{name: "first of two, its filter in a slot, matches", ops: firstOfTwo(SDF{TOS: 0xb8, TOSMask: 0xfc}), role: N3,
			frame: uplink(ulTunnel, tos), want: Redirected, usage: map[uint32]uint64{30: 1, 31: 0}},
		{name: "first of two, its filter in a slot, differs", ops: firstOfTwo(SDF{TOS: 0xb8, TOSMask: 0xfc}), role: N3,
			frame: uplink(ulTunnel, upFlow), want: Redirected, out: ok, usage: map[uint32]uint64{30: 0, 31: 1}},
		{name: "sdf protocol matches", ops: sdf(SDF{Proto: 17}), role: N3, frame: uplink(ulTunnel, upFlow),
			want: Redirected, out: ok, usage: map[uint32]uint64{7: 1}},
		{name: "sdf protocol differs", ops: sdf(SDF{Proto: 17}), role: N3, frame: uplink(ulTunnel, tcp),
			want: Dropped, drop: DropNoPDR},
		{name: "sdf source prefix matches", ops: sdf(SDF{Src: netip.MustParsePrefix("10.45.0.0/16")}), role: N3,
			frame: uplink(ulTunnel, upFlow), want: Redirected, out: ok},
		{name: "sdf source prefix differs", ops: sdf(SDF{Src: netip.MustParsePrefix("10.46.0.0/16")}), role: N3,
			frame: uplink(ulTunnel, upFlow), want: Dropped, drop: DropNoPDR},
		{name: "sdf IPv4 source prefix never matches IPv6", ops: sdf(SDF{Src: netip.MustParsePrefix("10.45.0.0/16")}), role: N3,
			frame: uplink(ulTunnel, upFlow6), want: Dropped, drop: DropNoPDR},
		{name: "sdf source and destination prefixes", ops: sdf(SDF{Src: netip.MustParsePrefix("10.45.0.0/16"), Dst: netip.PrefixFrom(addrDN, 32)}),
			role: N3, frame: uplink(ulTunnel, upFlow), want: Redirected, out: ok},
		{name: "sdf source and destination prefixes, destination differs", ops: sdf(SDF{Src: netip.MustParsePrefix("10.45.0.0/16"), Dst: netip.MustParsePrefix("198.18.7.99/32")}),
			role: N3, frame: uplink(ulTunnel, upFlow), want: Dropped, drop: DropNoPDR},
		{name: "sdf destination host matches", ops: sdf(SDF{Dst: netip.PrefixFrom(addrDN, 32)}), role: N3,
			frame: uplink(ulTunnel, upFlow), want: Redirected, out: ok},
		{name: "sdf port range inclusive at the top", ops: sdf(SDF{DstPorts: PortRange{4990, 5001}, SrcPorts: PortRange{40000, 40000}}),
			role: N3, frame: uplink(ulTunnel, upFlow), want: Redirected, out: ok},
		{name: "sdf port range just below", ops: sdf(SDF{DstPorts: PortRange{5002, 5010}}), role: N3,
			frame: uplink(ulTunnel, upFlow), want: Dropped, drop: DropNoPDR},
		{name: "sdf tos under mask matches", ops: sdf(SDF{TOS: 0xb8, TOSMask: 0xfc}), role: N3,
			frame: uplink(ulTunnel, tos), want: Redirected, out: decapOut(tos)},
		{name: "sdf tos under mask differs", ops: sdf(SDF{TOS: 0xb8, TOSMask: 0xfc}), role: N3,
			frame: uplink(ulTunnel, upFlow), want: Dropped, drop: DropNoPDR},
		{name: "sdf IPv6 prefix never matches IPv4", ops: sdf(SDF{Dst: netip.MustParsePrefix("2001:2::/32")}), role: N3,
			frame: uplink(ulTunnel, upFlow), want: Dropped, drop: DropNoPDR},
		{name: "sdf IPv6 prefix matches IPv6", ops: sdf(SDF{Dst: netip.MustParsePrefix("2001:2:0:7::/64")}), role: N3,
			frame: uplink(ulTunnel, upFlow6), want: Redirected, out: decapOut(upFlow6)},
		{name: "sdf flow label", ops: sdf(SDF{MatchFlow: true, FlowLabel: 0}), role: N3,
			frame: uplink(ulTunnel, upFlow6), want: Redirected, out: decapOut(upFlow6)},
		{name: "qfi matches", ops: []Op{uplinkPDRs(PDR{ID: 1, Src: Access, QFI: 9, OHR: OHRGTPUv4, FARID: 1})}, role: N3,
			frame: uplink(qfiTunnel(9), upFlow), want: Redirected, out: ok},
		{name: "qfi differs", ops: []Op{uplinkPDRs(PDR{ID: 1, Src: Access, QFI: 9, OHR: OHRGTPUv4, FARID: 1})}, role: N3,
			frame: uplink(qfiTunnel(5), upFlow), want: Dropped, drop: DropNoPDR},
		{name: "qfi required, none sent", ops: []Op{uplinkPDRs(PDR{ID: 1, Src: Access, QFI: 9, OHR: OHRGTPUv4, FARID: 1})}, role: N3,
			frame: uplink(ulTunnel, upFlow), want: Dropped, drop: DropNoPDR},
		{name: "source interface core does not match on N3", ops: []Op{uplinkPDRs(PDR{ID: 1, Src: Core, OHR: OHRGTPUv4, FARID: 1})},
			role: N3, frame: uplink(ulTunnel, upFlow), want: Dropped, drop: DropNoPDR},
		{name: "outer header removal of IPv6 only", ops: []Op{uplinkPDRs(PDR{ID: 1, Src: Access, OHR: OHRGTPUv6, FARID: 1})},
			role: N3, frame: uplink(ulTunnel, upFlow), want: Dropped, drop: DropOHRMismatch},
		{name: "tunnel kept is refused", ops: []Op{uplinkPDRs(PDR{ID: 1, Src: Access, FARID: 1})},
			role: N3, frame: uplink(ulTunnel, upFlow), want: Dropped, drop: DropOHRMismatch},
	})
}

func TestPrivilegedActions(t *testing.T) {
	frame := uplink(ulTunnel, upFlow)
	far := func(f FAR) []Op { return []Op{PutFAR{ID: 1, FAR: f}} }
	runFixtures(t, []fixture{
		{name: "far drop", ops: far(FAR{Action: Drop}), role: N3, frame: frame, want: Dropped, drop: DropFARDrop,
			usage: map[uint32]uint64{1: 0}},
		{name: "far without action drops", ops: far(FAR{}), role: N3, frame: frame, want: Dropped, drop: DropFARDrop},
		{name: "far beyond the table", ops: []Op{uplinkPDRs(PDR{ID: 1, Src: Access, OHR: OHRGTPUv4, FARID: 1 << 30})},
			role: N3, frame: frame, want: Dropped, drop: DropFARMissing},
		{name: "far buffer hands the frame over", ops: []Op{PutFAR{ID: 2, FAR: FAR{Action: Buff | Nocp}}}, role: N6,
			frame: downlink(downFlow), want: Dropped, drop: DropBuffered, usage: map[uint32]uint64{1: 0},
			event: &Event{Type: EventBuffer, Session: 1, PDRID: 2, Iface: N6, ID: 2, Frame: downlink(downFlow)}},
		{name: "far notify without buffering", ops: []Op{PutFAR{ID: 2, FAR: FAR{Action: Drop | Nocp}}}, role: N6,
			frame: downlink(downFlow), want: Dropped, drop: DropFARDrop,
			event: &Event{Type: EventNotify, Session: 1, PDRID: 2, Iface: N6, ID: 2}},
		{name: "uplink gate closed", ops: []Op{PutQER{ID: 2, QER: QER{ULClosed: true}},
			uplinkPDRs(PDR{ID: 1, Src: Access, OHR: OHRGTPUv4, FARID: 1, QERIDs: [2]uint32{2}, URRIDs: [2]uint32{1}})},
			role: N3, frame: frame, want: Dropped, drop: DropGateClosed, usage: map[uint32]uint64{1: 0}},
		{name: "downlink gate closed", ops: []Op{PutQER{ID: 1, QER: QER{DLClosed: true, QFI: 9}}}, role: N6,
			frame: downlink(downFlow), want: Dropped, drop: DropGateClosed},
		{name: "uplink gate open while downlink closed", ops: []Op{PutQER{ID: 2, QER: QER{DLClosed: true}},
			uplinkPDRs(PDR{ID: 1, Src: Access, OHR: OHRGTPUv4, FARID: 1, QERIDs: [2]uint32{2}})},
			role: N3, frame: frame, want: Redirected, out: decapOut(upFlow)},
		{name: "second QER closes", ops: []Op{PutQER{ID: 2, QER: QER{}}, PutQER{ID: 3, QER: QER{ULClosed: true}},
			uplinkPDRs(PDR{ID: 1, Src: Access, OHR: OHRGTPUv4, FARID: 1, QERIDs: [2]uint32{2, 3}})},
			role: N3, frame: frame, want: Dropped, drop: DropGateClosed},
		{name: "measured before QoS enforcement", ops: []Op{PutQER{ID: 2, QER: QER{ULClosed: true}}, PutURR{ID: 2, URR: URR{MBQE: true}},
			uplinkPDRs(PDR{ID: 1, Src: Access, OHR: OHRGTPUv4, FARID: 1, QERIDs: [2]uint32{2}, URRIDs: [2]uint32{1, 2}})},
			role: N3, frame: frame, want: Dropped, drop: DropGateClosed, usage: map[uint32]uint64{1: 0, 2: 1}},
	})
}

func TestPrivilegedPaths(t *testing.T) {
	ttl1 := upFlow
	ttl1.ttl = 1
	dttl1 := downFlow
	dttl1.ttl = 1
	big := downFlow
	big.payload = 1500 - 20 - 8 - 16 - 20 - 8 + 1 // one byte over the N3 MTU once encapsulated
	fits := big
	fits.payload--
	toLocal := upFlow
	toLocal.dst = addrN6
	runFixtures(t, []fixture{
		{name: "uplink ttl expires", role: N3, frame: uplink(ulTunnel, ttl1), want: Dropped, drop: DropTTLExpired},
		{name: "downlink ttl expires", role: N6, frame: downlink(dttl1), want: Dropped, drop: DropTTLExpired},
		{name: "downlink fits the N3 MTU exactly", role: N6, frame: downlink(fits), want: Redirected,
			out: encapOut(macGNB, macN3, addrN3, addrGNB, teidDL, qfiDef, fits)},
		{name: "downlink too large for the N3 MTU", role: N6, frame: downlink(big), want: Dropped, drop: DropMTU,
			usage: map[uint32]uint64{1: 0}},
		{name: "UE addressing the UPF", role: N3, frame: uplink(ulTunnel, toLocal), want: Dropped, drop: DropUEToLocal},
		{name: "gNB neighbour not resolved", ops: []Op{PutFAR{ID: 2, FAR: FAR{Action: Forw, TEID: teidDL, Peer: addrNoARP, Local: addrN3}}},
			role: N6, frame: downlink(downFlow), want: Dropped, drop: DropNoNeigh,
			event: &Event{Type: EventNoNeigh, Session: 1, Iface: N6, Peer: addrNoARP}},
		{name: "unknown TEID", role: N3, frame: uplink(tunnel{src: addrGNB, dst: addrN3, teid: 0x999}, upFlow),
			want: Dropped, drop: DropNoSession,
			event: &Event{Type: EventUnknownTEID, Iface: N3, TEID: 0x999, Peer: addrGNB}},
		{name: "TEID known on another endpoint only", role: N3, frame: uplink(tunnel{src: addrPeer, dst: addrN9, teid: teidUL}, upFlow),
			want: Dropped, drop: DropNoSession,
			event: &Event{Type: EventUnknownTEID, Iface: N3, TEID: teidUL, Peer: addrPeer}},
	})
}

// A filter needs an SDF slot for what the PDR cannot carry inline; an IPv4
// source prefix alone (an uplink PDR's UE address) it carries, with no slot.
func TestPrivilegedFilterNeedsSlot(t *testing.T) {
	ns := testenv.UPF(t)
	d := loadIn(t, ns, Options{})
	const needsSlot = "pdr 3: its filter needs an sdf slot"
	for _, c := range []struct {
		name   string
		filter SDF
		want   string // "" = installed without a slot
	}{
		{"IPv4 source alone", SDF{Src: netip.MustParsePrefix("10.45.0.2/32")}, ""},
		{"IPv4 source with protocol and ports", SDF{Src: netip.MustParsePrefix("10.45.0.0/16"), Proto: 17, DstPorts: PortRange{5060, 5060}}, ""},
		{"IPv4 source of any address", SDF{Src: netip.MustParsePrefix("0.0.0.0/0")}, needsSlot},
		{"IPv6 source", SDF{Src: netip.MustParsePrefix("2001:db8:45::/64")}, needsSlot},
		{"IPv4 source and destination", SDF{Src: netip.MustParsePrefix("10.45.0.2/32"), Dst: netip.MustParsePrefix("198.18.7.0/24")}, needsSlot},
		{"IPv4 source and ToS", SDF{Src: netip.MustParsePrefix("10.45.0.2/32"), TOS: 0xb8, TOSMask: 0xfc}, needsSlot},
		{"destination", SDF{Dst: netip.MustParsePrefix("198.18.7.0/24")}, needsSlot},
	} {
		p := PDR{ID: 3, Src: Access, OHR: OHRGTPUv4, FARID: 1, Filter: c.filter}
		err := d.Apply([]Op{uplinkPDRs(p)})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestPrivilegedApplyErrors(t *testing.T) {
	ns := testenv.UPF(t)
	d := loadIn(t, ns, Options{MaxSessions: 1024})
	far, lists := d.Sizes().FARs, d.Sizes().ListSlots
	for _, c := range []struct {
		name string
		ops  []Op
		want string
	}{
		{"far slot beyond the table", []Op{PutFAR{ID: far, Session: 0x1f, FAR: FAR{Action: Forw}}},
			fmt.Sprintf("install far %d of session 0x1f: far slot %d is outside 1..%d: map full", far, far, far-1)},
		{"far with a peer and no source", []Op{PutFAR{ID: 7, Session: 0x1f, FAR: FAR{Action: Forw, TEID: 1, Peer: addrGNB}}},
			"install far 7 of session 0x1f: far: no outer source address toward peer 198.18.3.1"},
		{"more PDRs than a list holds", []Op{PutUplink{UplinkKey{1, 0}, Rules{Session: 2, ListID: 1, PDRs: make([]PDR, MaxPDRs+1)}}},
			"install uplink teid 0x1 of session 0x2: session 0x2: 33 PDRs, at most 32"},
		{"pdr list past the end of the table", []Op{PutUplink{UplinkKey{1, 0}, Rules{Session: 2, ListID: lists - 1, PDRs: make([]PDR, 3)}}},
			fmt.Sprintf("install uplink teid 0x1 of session 0x2: pdr list slots %d..%d are outside 1..%d: map full", lists-1, lists, lists-1)},
		{"UE address that is not a host", []Op{PutDownlink{netip.MustParsePrefix("10.45.0.0/24"), Rules{Session: 3, PDRs: []PDR{{}}}}},
			"install downlink 10.45.0.0/24 of session 0x3: ue address 10.45.0.0/24: want an IPv4 /32 or an IPv6 prefix"},
	} {
		err := d.Apply(c.ops)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %q\nwant %q", c.name, err, c.want)
		}
		var ae *ApplyError
		if !errors.As(err, &ae) || ae.Done != 0 {
			t.Errorf("%s: want an ApplyError with nothing done, got %#v", c.name, err)
		}
	}
	if err := d.Apply([]Op{PutFAR{ID: far, FAR: FAR{Action: Forw}}}); !errors.Is(err, ErrFull) {
		t.Errorf("a full table is ErrFull, got %v", err)
	}
}
