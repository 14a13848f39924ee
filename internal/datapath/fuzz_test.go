package datapath

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// FuzzDatapath feeds arbitrary frames to the N3 or N6 program. Whatever
// arrives, the program never aborts, every packet is counted exactly once,
// and what it sends out is a well-formed frame from one of our ports.
//
// Each frame also goes through a second datapath without the fast path
// (bpf/lib/lean.h). Each runs the frame twice, the first run filling the
// next-hop cache, which the fast path needs, and the two must agree on the
// verdict, the frame sent and every counter, both times.
func FuzzDatapath(f *testing.F) {
	ns := testenv.UPF(f)
	// Echo replies and path events are rate limited by the clock, which
	// the two datapaths read at different times: 1 ns apart, never.
	d := loadIn(f, ns, Options{EventInterval: time.Nanosecond})
	general := loadIn(f, ns, Options{EventInterval: time.Nanosecond, NoFastPath: true})
	for _, dp := range []*Datapath{d, general} {
		if err := dp.Apply(append(baseSession(), leanSession()...)); err != nil {
			f.Fatal(err)
		}
	}
	psc := tunnel{src: addrGNB, dst: addrN3, teid: teidUL, qfi: qfiDef, pduType: 1, df: true}
	lean := psc
	lean.teid = teidLean
	f.Add(uplink(ulTunnel, upFlow), false)
	f.Add(uplink(psc, upFlow), false)
	leanUp := flow{src: ueLean, dst: addrDN, sport: 40000, dport: 5001, payload: 64}
	leanDown := flow{src: addrDN, dst: ueLean, sport: 5001, dport: 40000, payload: 64}
	tcp := func(f flow) flow { f.proto, f.payload = layers.IPProtocolTCP, 1300; return f }
	ttl1 := func(f flow) flow { f.ttl = 1; return f }
	f.Add(uplink(lean, leanUp), false)
	f.Add(uplink(lean, tcp(leanUp)), false)
	f.Add(uplink(lean, upFlow), false) // not the UE's address
	f.Add(uplink(lean, ttl1(leanUp)), false)
	list := lean
	list.teid = teidLeanList
	f.Add(uplink(list, tcp(flow{src: ueLean, dst: addrDN, sport: 40000, dport: 80})), false)
	f.Add(uplink(list, leanUp), false)
	ef := leanUp
	ef.tos = 0xb8
	f.Add(uplink(list, ef), false)
	quota := lean
	quota.teid = teidLeanQuota
	quotaUp, quotaDown := tcp(leanUp), tcp(leanDown)
	quotaUp.src, quotaDown.dst = ueLeanQuota, ueLeanQuota
	f.Add(uplink(quota, quotaUp), false)
	f.Add(downlink(quotaDown), true) // spends the quota: dropped, and the event sent
	f.Add(uplink(quota, quotaUp), false)
	f.Add(downlink(leanDown), true)
	f.Add(downlink(tcp(leanDown)), true)
	f.Add(downlink(ttl1(leanDown)), true)
	f.Add(uplink(tunnel{src: addrGNB, dst: addrN3, teid: teidUL, qfi: 9, pduType: 1, seq: u16p(7)}, upFlow6), false)
	f.Add(uplink(tunnel{src: addrGNBv6, dst: addrN3v6, teid: teidUL}, upFlow), false)
	f.Add(gtpuFrame(macN3, macGNB, tunnel{src: addrGNB, dst: addrN3, msgType: 1, seq: u16p(1)}, nil), false)
	f.Add(downlink(downFlow), true)
	f.Add(downlink(down6), true)

	f.Fuzz(func(t *testing.T, frame []byte, n6 bool) {
		if len(frame) < 14 || len(frame) > 1600 {
			return // BPF_PROG_RUN wants at least an Ethernet header and one page
		}
		role := N3
		if n6 {
			role = N6
		}
		for run := 1; run <= 2; run++ {
			got := observe(t, d, ns, role, frame)
			want := observe(t, general, ns, role, frame)
			if diff := got.differs(want); diff != "" {
				t.Fatalf("run %d: with the fast path %s", run, diff)
			}
			got.check(t, frame)
		}
	})
}

// A session the fast path takes, as the SMFs send it: a UE address filter
// on the uplink PDR, an MBR QER and a URR on both, and downlink a tunnel
// with transport level marking.
var (
	teidLean      = uint32(0x700)
	teidLeanList  = uint32(0x701)
	teidLeanQuota = uint32(0x702)
	ueLean        = netip.MustParseAddr("10.45.0.7")
	ueLeanQuota   = netip.MustParseAddr("10.45.0.8")
)

// urrQuota is leanSession's URR with a volume quota, which the seeds spend.
const urrQuota = 12

func leanSession() []Op {
	ul := PDR{ID: 7, Src: Access, OHR: OHRGTPUIP, FARID: 1, QERIDs: [2]uint32{7}, URRIDs: [2]uint32{7},
		Filter: SDF{Src: netip.PrefixFrom(ueLean, 32)}}
	dl := PDR{ID: 8, Src: Core, FARID: 8, QERIDs: [2]uint32{7}, URRIDs: [2]uint32{7}}
	// A list, scanned by the fast path as by the general pipeline: port 80
	// and one data network host with DSCP EF (a filter in an SDF slot) are
	// counted apart from the rest.
	web, dn, rest := ul, ul, ul
	web.ID, web.Filter.DstPorts, web.URRIDs = 9, PortRange{80, 80}, [2]uint32{1}
	dn.ID, dn.URRIDs, dn.SDFID = 11, [2]uint32{1}, 11
	dn.Filter.Dst, dn.Filter.TOS, dn.Filter.TOSMask = netip.PrefixFrom(addrDN, 32), 0xb8, 0xfc
	rest.ID = 10
	// A UE whose PDRs count in a URR with a volume quota of three packets'
	// worth: the seeds spend it, each frame running twice in each datapath.
	quotaUL, quotaDL := ul, dl
	quotaUL.ID, quotaUL.URRIDs, quotaUL.Filter.Src = 12, [2]uint32{urrQuota}, netip.PrefixFrom(ueLeanQuota, 32)
	quotaDL.ID, quotaDL.URRIDs = 13, [2]uint32{urrQuota}
	return []Op{
		PutFAR{ID: 8, FAR: FAR{Action: Forw, TEID: 0x800, Peer: addrGNB, Local: addrN3, TOS: 0xb8, HasTOS: true}},
		PutQER{ID: 7, QER: QER{MBRUplink: 1_000_000_000, MBRDownlink: 1_000_000_000, QFI: 5, RQI: true}},
		PutURR{ID: 7, URR: URR{}},
		PutURR{ID: urrQuota, URR: URR{HasQuota: true, Quota: 4000}},
		PutUplink{UplinkKey{teidLean, epN3}, Rules{Session: 7, PDRs: []PDR{ul}}},
		PutUplink{UplinkKey{teidLeanList, epN3}, Rules{Session: 7, PDRs: []PDR{web, dn, rest}, ListID: 1}},
		PutDownlink{netip.PrefixFrom(ueLean, 32), Rules{Session: 7, PDRs: []PDR{dl}}},
		PutUplink{UplinkKey{teidLeanQuota, epN3}, Rules{Session: 7, PDRs: []PDR{quotaUL}}},
		PutDownlink{netip.PrefixFrom(ueLeanQuota, 32), Rules{Session: 7, PDRs: []PDR{quotaDL}}},
	}
}

// observed is what one run of a frame did: its verdict, the frame sent, and
// how the counters moved.
type observed struct {
	verdict    Verdict
	out        []byte
	verdicts   [5]uint64
	drops      map[DropReason]uint64
	interfaces map[Role]InterfaceStats
	usage      map[uint32]Usage // the sessions' URRs
}

func observe(t *testing.T, d *Datapath, ns string, role Role, frame []byte) observed {
	t.Helper()
	before, err := d.Stats()
	if err != nil {
		t.Fatal(err)
	}
	usageBefore := urrUsage(t, d)
	v, out := runXDP(t, d, ns, role, frame)
	after, err := d.Stats()
	if err != nil {
		t.Fatal(err)
	}
	o := observed{verdict: v, out: out, drops: diffDrops(before, after),
		interfaces: map[Role]InterfaceStats{}, usage: map[uint32]Usage{}}
	for i := range after.Verdicts {
		o.verdicts[i] = after.Verdicts[i] - before.Verdicts[i]
	}
	for r, s := range after.Interfaces {
		b := before.Interfaces[r]
		o.interfaces[r] = InterfaceStats{
			Rx: Traffic{s.Rx.Packets - b.Rx.Packets, s.Rx.Bytes - b.Rx.Bytes},
			Tx: Traffic{s.Tx.Packets - b.Tx.Packets, s.Tx.Bytes - b.Tx.Bytes}}
	}
	for id, u := range urrUsage(t, d) {
		b := usageBefore[id]
		o.usage[id] = Usage{
			Uplink:   Traffic{u.Uplink.Packets - b.Uplink.Packets, u.Uplink.Bytes - b.Uplink.Bytes},
			Downlink: Traffic{u.Downlink.Packets - b.Downlink.Packets, u.Downlink.Bytes - b.Downlink.Bytes}}
	}
	return o
}

func urrUsage(t *testing.T, d *Datapath) map[uint32]Usage {
	t.Helper()
	m := map[uint32]Usage{}
	for _, id := range []uint32{1, 7, urrQuota} {
		u, err := d.Usage(id)
		if err != nil {
			t.Fatal(err)
		}
		m[id] = u
	}
	return m
}

// differs says how o and want differ, or "".
func (o observed) differs(want observed) string {
	switch {
	case o.verdict != want.verdict:
		return fmt.Sprintf("verdict %v, without %v", o.verdict, want.verdict)
	case (o.verdict == Redirected || o.verdict == Transmitted) && !bytes.Equal(o.out, want.out):
		return fmt.Sprintf("sent\n%x\nwithout\n%x", o.out, want.out)
	case o.verdicts != want.verdicts:
		return fmt.Sprintf("counted verdicts %v, without %v", o.verdicts, want.verdicts)
	case !maps.Equal(o.drops, want.drops):
		return fmt.Sprintf("counted drops %v, without %v", o.drops, want.drops)
	case !maps.Equal(o.interfaces, want.interfaces):
		return fmt.Sprintf("counted on interfaces %v, without %v", o.interfaces, want.interfaces)
	case !maps.Equal(o.usage, want.usage):
		return fmt.Sprintf("counted usage %v, without %v", o.usage, want.usage)
	}
	return ""
}

// check: the packet counted once, as what became of it.
func (o observed) check(t *testing.T, frame []byte) {
	t.Helper()
	var counted uint64
	for _, n := range o.verdicts {
		counted += n
	}
	if counted != 1 {
		t.Fatalf("verdict counted %d times", counted)
	}
	switch o.verdict {
	case Dropped:
		if len(o.drops) != 1 {
			t.Fatalf("dropped with reasons %v", o.drops)
		}
	case Passed:
		if !bytes.Equal(o.out, frame) {
			t.Fatalf("frame passed to the kernel was altered")
		}
	case Transmitted, Redirected:
		checkSent(t, o.out)
	default:
		t.Fatalf("verdict %d", o.verdict)
	}
}

// checkSent: our source MAC, an IP EtherType, and an IP length that is the frame's.
func checkSent(t *testing.T, out []byte) {
	t.Helper()
	if len(out) < 14+20 {
		t.Fatalf("sent a %d-byte frame", len(out))
	}
	src := out[6:12]
	if !bytes.Equal(src, macN3) && !bytes.Equal(src, macN6) && !bytes.Equal(src, macN9) {
		t.Fatalf("sent from %x", src)
	}
	var ipLen int
	switch binary.BigEndian.Uint16(out[12:]) {
	case 0x0800:
		ipLen = int(binary.BigEndian.Uint16(out[16:]))
	case 0x86dd:
		ipLen = 40 + int(binary.BigEndian.Uint16(out[18:]))
	default:
		t.Fatalf("sent EtherType %#x", out[12:14])
	}
	if ipLen != len(out)-14 {
		t.Fatalf("IP length %d in a %d-byte frame", ipLen, len(out))
	}
}
