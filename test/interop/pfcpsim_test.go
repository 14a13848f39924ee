// Package interop drives the real upfd with an SMF that is not ours: OMEC's
// pfcpsim v1.4.4 (pfcpsim, its gRPC server, and pfcpctl, its CLI), built
// from the module cache, with real traffic through upfd and exact counts.
package interop

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/api"
	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
)

func TestMain(m *testing.M) {
	code := testenv.Main(m)
	if simDir != "" {
		os.RemoveAll(simDir)
	}
	os.Exit(code)
}

const (
	// allow is pfcpctl's application filter; pfcpsim writes it as the
	// SDF filter allowSDF on a PDR each way, precedence 100, its QERs'
	// gates open.
	allow    = "udp:198.18.7.10/32:5000-5010:allow:100"
	allowSDF = "permit out 17 from 198.18.7.10 to assigned 5000-5010" // as upfd's API writes it back
	// deny, on the one session only, is a second pair of PDRs that takes
	// port 5005 first (precedence 50), with their QERs' gates closed:
	// "ip" with ports, TCP's, UDP's and SCTP's.
	deny    = "ip:198.18.7.10/32:5005-5005:deny:50"
	denySDF = "permit out ip from 198.18.7.10 to assigned 5005"
	gnbAddr = "198.18.3.1"
	// The test's datagrams: uplink to dnPort on the DN host, downlink
	// from dnSrcPort.
	dnPort, dnSrcPort = 6000, 6001
)

var (
	dnHost  = netip.MustParseAddr("198.18.7.10") // the filter's remote
	dnOther = netip.MustParseAddr("198.18.7.11") // a DN host outside it
)

// batch is one pfcpctl create: pfcpsim numbers its sessions i = base,
// base+10, ... (count of them). Session i has uplink TEID i (pfcpsim
// allocates it, at upfd's N3 address), downlink TEID i+1 once forwarding,
// two PDRs, FARs, QERs and URRs per application filter with IDs from
// uint16(i) on, QER 0 for the session, a CP SEID in creation order, and
// the UE address pool+1, pool+2, ...
type batch struct {
	base, count int
	pool        string   // pfcpsim starts after the address, whatever the mask
	filters     []string // pfcpctl's application filters
}

func (b batch) i(k int) uint32 { return uint32(b.base + 10*k) }

func (b batch) ue(k int) netip.Addr {
	a := netip.MustParsePrefix(b.pool).Addr().As4()
	v := binary.BigEndian.Uint32(a[:]) + 1 + uint32(k)
	binary.BigEndian.PutUint32(a[:], v)
	return netip.AddrFrom4(a)
}

func (b batch) args(verb string, extra ...string) []string {
	a := []string{"session", verb, "--count", strconv.Itoa(b.count), "--baseID", strconv.Itoa(b.base)}
	if verb != "delete" {
		a = append(a, "--ue-pool", b.pool, "--gnb-addr", gnbAddr)
		for _, f := range b.filters {
			a = append(a, "--app-filter", f)
		}
	}
	if verb == "create" {
		a = append(a, "--qfi", "9")
	}
	return append(a, extra...)
}

// rig is the lab with upfd, pfcpsim, the N4 capture and the test's
// sockets: the gNB's, and the DN host's (198.18.7.10, and .11 outside the
// filter).
type rig struct {
	t                 *testing.T
	lab               testenv.Lab
	log               *testenv.Log
	sim               *sim
	n4                *n4
	gnb, dnRx, dnRx11 *net.UDPConn
	dnTx, dnTx11      *net.UDPConn
	figures           []string
}

func (r *rig) figure(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.figures = append(r.figures, s)
	r.t.Log(s)
}

// TestPrivilegedPfcpsim: pfcpsim associates with upfd; creates a session
// with two application filters, modifies it to forward, to buffer and
// notify, and to forward again, and deletes it; shows that a session past
// its ID wrap cannot be modified; then creates 10,000 sessions, modifies
// them to forward and deletes them. Traffic goes through upfd both ways at
// each step and every frame is accounted for, by the sockets it reaches
// and by upfd's drop counters. docs/pfcp.md says how the test lives with
// pfcpsim's own bugs.
func TestPrivilegedPfcpsim(t *testing.T) {
	testenv.RequirePrivileges(t)
	began := time.Now()
	lab := testenv.NewLab(t)
	testenv.Sh(t, "ip", "-n", lab.DN, "addr", "add", dnOther.String()+"/32", "dev", "lo")
	// The lab is IPv4: no router or multicast listener solicitations from
	// the gNB and the DN among what upfd's drop counters count.
	for _, ns := range []string{lab.GNB, lab.DN} {
		testenv.Sh(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
	}
	r := &rig{t: t, lab: lab}
	// On the UPF's side of N4: what reaches pfcpsim's side may be
	// held back (reportGate).
	r.n4 = capture(t, lab.UPF, "n4")
	r.log, _ = testenv.StartUPFD(t, lab.UPF, upfdConfig(t))
	r.sim = startPfcpsim(t, lab.SMF)
	waitReady(t, lab.UPF, r.log)
	r.gnb = testenv.ListenUDP(t, lab.GNB, gnbAddr+":2152")
	r.dnRx = testenv.ListenUDP(t, lab.DN, netip.AddrPortFrom(dnHost, dnPort).String())
	r.dnRx11 = testenv.ListenUDP(t, lab.DN, netip.AddrPortFrom(dnOther, dnPort).String())
	r.dnTx = testenv.ListenUDP(t, lab.DN, netip.AddrPortFrom(dnHost, dnSrcPort).String())
	r.dnTx11 = testenv.ListenUDP(t, lab.DN, netip.AddrPortFrom(dnOther, dnSrcPort).String())
	t.Cleanup(func() {
		t.Logf("figures:\n  %s", strings.Join(r.figures, "\n  "))
		if t.Failed() {
			t.Logf("upfd's log:\n%s", tail(r.log.String(), 80))
		}
	})

	steps := []struct {
		name string
		run  func(*testing.T)
	}{
		{"associate", r.associate},
		{"one session", r.oneSession},
		{"past pfcpsim's ID wrap", r.wrap},
		{"10,000 sessions", r.manySessions},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			return
		}
	}
	associated(t, lab.UPF, r.log)
	hb := 0
	for _, m := range r.n4.since(0) {
		if m.typ == msgHeartbeatReq && m.fromUPF {
			hb++
		}
	}
	r.figure("upfd sent %d Heartbeat Requests (with retransmissions), pfcpsim answered none and stayed associated", hb)
	if lost := r.n4.lost(); lost != 0 {
		t.Errorf("the N4 capture lost %d frames: its counts are short", lost)
	}
	r.figure("whole test (build, namespaces, upfd and pfcpsim included): %v", time.Since(began).Round(time.Millisecond))
}

// associate: configure pfcpsim and set up the association.
func (r *rig) associate(t *testing.T) {
	r.sim.must(t, 10*time.Second, "service", "configure", "--n3-addr", "198.18.3.2", "--remote-peer-addr", "198.18.4.2")
	mark := r.n4.mark()
	took := r.sim.must(t, 10*time.Second, "service", "associate")
	r.figure("associate: %v", took.Round(time.Millisecond))
	r.exchanged(t, mark, msgAssocSetupReq, msgAssocSetupResp, 1)
	associated(t, r.lab.UPF, r.log)
}

// exchanged checks that after mark pfcpsim sent n requests of type req and
// upfd answered each with resp, Request accepted. It gives the capture up
// to 3 s to catch up.
func (r *rig) exchanged(t *testing.T, mark int, req, resp uint8, n int) []pfcpMsg {
	t.Helper()
	var msgs []pfcpMsg
	var reqs, resps int
	var bad []string
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		msgs, reqs, resps, bad = r.n4.since(mark), 0, 0, nil
		for _, m := range msgs {
			switch {
			case m.typ == req && !m.fromUPF:
				reqs++
			case m.typ == resp && m.fromUPF:
				resps++
				if m.cause != 1 {
					bad = append(bad, m.String())
				}
			}
		}
		if reqs >= n && resps >= n || time.Now().After(deadline) {
			break
		}
	}
	if reqs != n || resps != n || bad != nil {
		t.Errorf("%s: pfcpsim sent %d, upfd answered %d, want %d each, all accepted; %d refused, e.g. %v",
			msgNames[req], reqs, resps, n, len(bad), bad[:min(len(bad), 5)])
	}
	return msgs
}

// oneSession: one session with two application filters, its traffic both
// ways, the buffering and its report, the flush, the deletion.
func (r *rig) oneSession(t *testing.T) {
	b := batch{base: 1, count: 1, pool: "10.45.0.0/16", filters: []string{allow, deny}}
	ue, ulTEID, dlTEID := b.ue(0), b.i(0), b.i(0)+1
	up, reports := r.n4.mark(), r.reportsMark(t)
	r.n4.keepBytes(true)
	defer r.n4.keepBytes(false)
	t.Cleanup(func() {
		if t.Failed() {
			var lines []string
			for _, m := range r.n4.since(up) {
				lines = append(lines, m.at.Format("15:04:05.000 ")+m.String())
			}
			t.Logf("N4:\n%s", strings.Join(lines, "\n"))
		}
	})

	took := r.sim.must(t, time.Minute, b.args("create")...)
	r.figure("one session: create %v", took.Round(time.Millisecond))
	r.exchanged(t, up, msgEstReq, msgEstResp, 1)
	seid := r.checkSession(t, ue, ulTEID)

	t.Run("uplink forwarded, downlink dropped (FAR DROP)", func(t *testing.T) {
		// pfcpsim creates the downlink FARs with DROP; they forward once
		// modified with the gNB's tunnel.
		before := drops(t, r.lab.UPF)
		r.uplinkWithFilters(t, "one session, before forwarding", ue, ulTEID, 0x0100)
		r.downlink(t, ue, dlTEID, 0x0101, 20, 0)
		wantDrops(t, r.lab.UPF, "uplink and dropped downlink", before, map[string]uint64{"no_pdr": 80, "gate_closed": 10, "far_drop": 20})
	})

	mark := r.n4.mark()
	took = r.sim.must(t, time.Minute, b.args("modify")...)
	r.figure("one session: modify to forward %v", took.Round(time.Millisecond))
	r.exchanged(t, mark, msgModReq, msgModResp, 1)

	t.Run("both ways with the filters", func(t *testing.T) {
		before := drops(t, r.lab.UPF)
		r.uplinkWithFilters(t, "one session", ue, ulTEID, 0x0200)
		r.downlinkWithFilters(t, "one session", ue, dlTEID, 0x0201)
		wantDrops(t, r.lab.UPF, "both ways", before, map[string]uint64{"no_pdr": 80 + 60, "gate_closed": 10 + 10})
	})

	const held = 50
	t.Run("buffer and notify", func(t *testing.T) {
		mark := r.n4.mark()
		took := r.sim.must(t, time.Minute, b.args("modify", "--buffer", "--notifycp")...)
		r.figure("one session: modify to buffer and notify %v", took.Round(time.Millisecond))
		r.exchanged(t, mark, msgModReq, msgModResp, 1)
		before := drops(t, r.lab.UPF)
		mark, first := r.n4.mark(), time.Now()
		r.downlink(t, ue, dlTEID, 0x0300, held, 0)
		wantDrops(t, r.lab.UPF, "buffering", before, map[string]uint64{"buffered": held})
		r.downlinkDataReport(t, mark, first, seid)
	})

	t.Run("forward again: the buffer flushed in order", func(t *testing.T) {
		mark := r.n4.mark()
		got := listen(r.gnb, held)
		took := r.sim.must(t, time.Minute, b.args("modify")...)
		r.figure("one session: modify to forward again %v", took.Round(time.Millisecond))
		r.exchanged(t, mark, msgModReq, msgModResp, 1)
		fl := r.gtpFlows(t, got.wait(), dlTEID, ue)
		inOrder := numbered(t, "flush", fl, 0x0300, held)
		if !inOrder {
			t.Errorf("flush: the buffered frames came out of order")
		}
		r.figure("one session: %d downlink frames buffered; %d flushed, in order: %v", held, len(fl), inOrder)
		for _, m := range r.n4.since(mark) {
			if m.typ == msgReportReq && m.report&0x01 != 0 {
				t.Errorf("a second downlink data report: %v", m)
			}
		}
		r.downlink(t, ue, dlTEID, 0x0301, 20, 20)
	})

	t.Run("delete", func(t *testing.T) {
		mark := r.n4.mark()
		took := r.sim.must(t, time.Minute, b.args("delete")...)
		r.figure("one session: delete %v", took.Round(time.Millisecond))
		msgs := r.exchanged(t, mark, msgDelReq, msgDelResp, 1)
		r.finalUsage(t, msgs)
		if n := sessionCount(t, r.lab.UPF); n != 0 {
			t.Errorf("upfd holds %d sessions after the deletion", n)
		}
		before := drops(t, r.lab.UPF)
		got := listen(r.dnRx, 0)
		send(t, 20, func(i int) error {
			_, err := r.gnb.WriteToUDP(gpdu(ulTEID, packet(17, ue, dnHost, 5000, dnPort, payload(0x0400, uint32(i)))), n3)
			return err
		})
		if n := len(got.wait()); n != 0 {
			t.Errorf("after the deletion %d uplink datagrams reached the DN", n)
		}
		wantDrops(t, r.lab.UPF, "after the deletion", before, map[string]uint64{"no_session": 20})
		r.drainGNB()
	})
	r.reportsAnswered(t, "one session", up, reports)
	r.periodic(r.n4.since(up))
}

// periodic notes when upfd sent the first periodic usage report (PERIO,
// pfcpsim's URR 1, period 1 s) after the session was established.
func (r *rig) periodic(msgs []pfcpMsg) {
	var est time.Time
	for _, m := range msgs {
		switch {
		case m.typ == msgEstResp && m.fromUPF:
			est = m.at
		case !est.IsZero() && m.typ == msgReportReq && m.fromUPF && m.report&0x02 != 0:
			r.figure("one session: first periodic usage report (period 1 s) %v after the establishment", m.at.Sub(est).Round(time.Millisecond))
			return
		}
	}
}

// checkSession finds the session upfd holds for ue and checks what
// pfcpsim asked for: its uplink F-TEID and the SDF filters, each on a PDR
// each way. It returns upfd's SEID.
func (r *rig) checkSession(t *testing.T, ue netip.Addr, teid uint32) uint64 {
	t.Helper()
	var l api.SessionList
	apiGet(t, r.lab.UPF, "/sessions?ue="+ue.String(), &l)
	if l.Total != 1 {
		t.Fatalf("upfd holds %d sessions for UE %v, want 1", l.Total, ue)
	}
	var s api.Session
	apiGet(t, r.lab.UPF, "/sessions/"+l.Sessions[0].SEID, &s)
	filters := map[string]int{}
	for _, p := range s.PDRs {
		for _, f := range p.SDFFilters {
			filters[f.FlowDescription]++
		}
		if p.SourceInterface == "access" && (p.FTEID == nil || p.FTEID.TEID != teid || p.FTEID.IPv4 != "198.18.3.2") {
			t.Errorf("uplink PDR %d: F-TEID %+v, want TEID %d at 198.18.3.2", p.ID, p.FTEID, teid)
		}
	}
	if len(s.PDRs) != 4 || filters[allowSDF] != 2 || filters[denySDF] != 2 {
		t.Errorf("session %s: %d PDRs with filters %v; want 4, %q and %q on two each", s.SEID, len(s.PDRs), filters, allowSDF, denySDF)
	}
	seid, err := strconv.ParseUint(strings.TrimPrefix(s.SEID, "0x"), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return seid
}

// uplinkWithFilters sends 110 datagrams from the UE's ports 5000-5010 to
// the DN host: the 100 not from 5005 must arrive, the 10 from 5005 meet
// the deny filter's closed gate. Then 80 outside the filters, which none
// may: from port 4999 and 5011, to 198.18.7.11, and TCP.
func (r *rig) uplinkWithFilters(t *testing.T, what string, ue netip.Addr, teid, tag uint32) {
	t.Helper()
	const n = 110
	got, other := listen(r.dnRx, n-n/11), listen(r.dnRx11, 0)
	var k uint32 // numbers the datagrams that should arrive
	send(t, n, func(i int) error {
		port, num := uint16(5000+i%11), k
		if port == 5005 {
			num = 0x8000 + uint32(i)
		} else {
			k++
		}
		_, err := r.gnb.WriteToUDP(gpdu(teid, packet(17, ue, dnHost, port, dnPort, payload(tag, num))), n3)
		return err
	})
	outside := []struct {
		proto        uint8
		dst          netip.Addr
		sport, dport uint16
	}{{17, dnHost, 4999, dnPort}, {17, dnHost, 5011, dnPort}, {17, dnOther, 5000, dnPort}, {6, dnHost, 5000, dnPort}}
	send(t, 80, func(i int) error {
		o := outside[i%4]
		_, err := r.gnb.WriteToUDP(gpdu(teid, packet(o.proto, ue, o.dst, o.sport, o.dport, payload(tag, 0x9000+uint32(i)))), n3)
		return err
	})
	fl := fromDN(t, got.wait())
	numbered(t, "uplink", fl, tag, n-n/11)
	extra := len(other.wait())
	if extra != 0 {
		t.Errorf("uplink: %d datagrams reached 198.18.7.11, outside the filters", extra)
	}
	r.figure("%s: uplink %d of %d arrived, %d to the denied port and 80 outside the filters did not (%d reached 198.18.7.11)", what, len(fl), n-n/11, n/11, extra)
}

// downlinkWithFilters sends 110 datagrams from the DN host to the UE's
// ports 5000-5010: the 100 not to 5005 must reach the gNB in dlTEID, the
// 10 to 5005 meet the deny filter's closed gate. Then 60 outside the
// filters, which none may: to port 4999 and 5011, and from 198.18.7.11.
func (r *rig) downlinkWithFilters(t *testing.T, what string, ue netip.Addr, teid, tag uint32) {
	t.Helper()
	const n = 110
	got := listen(r.gnb, n-n/11)
	var k uint32
	send(t, n, func(i int) error {
		port, num := uint16(5000+i%11), k
		if port == 5005 {
			num = 0x8000 + uint32(i)
		} else {
			k++
		}
		_, err := r.dnTx.WriteToUDP(payload(tag, num), net.UDPAddrFromAddrPort(netip.AddrPortFrom(ue, port)))
		return err
	})
	send(t, 60, func(i int) error {
		c, port := r.dnTx, []uint16{4999, 5011, 5000}[i%3]
		if i%3 == 2 {
			c = r.dnTx11
		}
		_, err := c.WriteToUDP(payload(tag, 0x9000+uint32(i)), net.UDPAddrFromAddrPort(netip.AddrPortFrom(ue, port)))
		return err
	})
	fl := r.gtpFlows(t, got.wait(), teid, ue)
	numbered(t, "downlink", fl, tag, n-n/11)
	r.figure("%s: downlink %d of %d arrived in TEID %d with QFI 9, %d to the denied port and 60 outside the filters did not", what, len(fl), n-n/11, teid, n/11)
}

// downlink sends n datagrams from the DN host to the UE's port 5000 and
// checks that want of them reach the gNB, in teid.
func (r *rig) downlink(t *testing.T, ue netip.Addr, teid, tag uint32, n, want int) {
	t.Helper()
	got := listen(r.gnb, want)
	to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(ue, 5000))
	send(t, n, func(i int) error {
		_, err := r.dnTx.WriteToUDP(payload(tag, uint32(i)), to)
		return err
	})
	numbered(t, "downlink", r.gtpFlows(t, got.wait(), teid, ue), tag, want)
}

// gtpFlows reads the G-PDUs the gNB got: each in teid with QFI 9 (the
// app QER's; pfcpsim's session QER has QFI 0), from the DN host to ue.
func (r *rig) gtpFlows(t *testing.T, got [][]byte, teid uint32, ue netip.Addr) []flowOf {
	t.Helper()
	var fl []flowOf
	for _, b := range got {
		g, err := parseGTP(b)
		if err != nil || g.typ != 0xff {
			t.Errorf("the gNB got a GTP-U message of type %d (%v), want G-PDUs only", g.typ, err)
			continue
		}
		f, err := readInner(g.inner)
		if err != nil {
			t.Error(err)
			continue
		}
		if g.teid != teid || g.qfi != 9 || f.dst != ue || f.src != dnHost && f.src != dnOther {
			t.Errorf("a G-PDU in TEID %d with QFI %d from %v to %v: want TEID %d, QFI 9, to %v", g.teid, g.qfi, f.src, f.dst, teid, ue)
		}
		fl = append(fl, f)
	}
	return fl
}

// downlinkDataReport: upfd reports the first buffered frame (DLDR) once,
// for pfcpsim's SEID, and pfcpsim answers it.
func (r *rig) downlinkDataReport(t *testing.T, mark int, first time.Time, seid uint64) {
	t.Helper()
	var req, resp *pfcpMsg
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && resp == nil; time.Sleep(20 * time.Millisecond) {
		req, resp = nil, nil
		for _, m := range r.n4.since(mark) {
			switch {
			case m.typ == msgReportReq && m.fromUPF && m.report&0x01 != 0:
				if req != nil {
					t.Errorf("a second downlink data report: %v", m)
				}
				req = &m
			case req != nil && m.typ == msgReportResp && !m.fromUPF && m.seq == req.seq:
				resp = &m
			}
		}
	}
	if req == nil {
		t.Fatalf("upfd sent no downlink data report\n%s", tail(r.log.String(), 20))
	}
	if resp == nil {
		t.Fatalf("pfcpsim did not answer the downlink data report (%v)", req)
	}
	msg, err := message.Parse(req.raw)
	if err != nil {
		t.Fatal(err)
	}
	rep := msg.(*message.SessionReportRequest)
	kids, err := rep.DownlinkDataReport.DownlinkDataReport()
	if err != nil || len(kids) == 0 || kids[0].Type != ie.PDRID {
		t.Errorf("downlink data report without the PDR ID: %v", err)
	} else if id, _ := kids[0].PDRID(); id != 2 {
		t.Errorf("downlink data report for PDR %d, want 2 (pfcpsim's downlink PDR)", id)
	}
	if req.seid != 1 || resp.cause != 1 || resp.seid != seid {
		t.Errorf("report %v, answer %v: want upfd to send it for CP SEID 0x1 and pfcpsim to accept it for upfd's SEID %#x", req, resp, seid)
	}
	r.figure("one session: downlink data report %v after the first frame; pfcpsim answered %v",
		req.at.Sub(first).Round(10*time.Microsecond), resp)
}

// finalUsage: the deletion response carries a usage report (TERMR) for
// each of pfcpsim's URRs, two per application filter. pfcpsim puts its URRs on no PDR, so they
// measure nothing: 0 packets, exactly.
func (r *rig) finalUsage(t *testing.T, msgs []pfcpMsg) {
	t.Helper()
	for _, m := range msgs {
		if m.typ != msgDelResp {
			continue
		}
		msg, err := message.Parse(m.raw)
		if err != nil {
			t.Fatal(err)
		}
		del := msg.(*message.SessionDeletionResponse)
		var ids []uint32
		for _, u := range del.UsageReport {
			kids, err := u.ValueAsGrouped()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range kids {
				switch k.Type {
				case ie.URRID:
					id, _ := k.URRID()
					ids = append(ids, id)
				case ie.VolumeMeasurement:
					v, _ := k.VolumeMeasurement()
					if v.TotalVolume != 0 || v.TotalNumberOfPackets != 0 {
						t.Errorf("usage of a URR on no PDR: %+v, want nothing", v)
					}
				}
			}
		}
		if fmt.Sprint(ids) != "[1 2 3 4]" {
			t.Errorf("deletion response: usage reports of URRs %v, want [1 2 3 4]", ids)
		}
		r.figure("one session: deletion response with the final usage of URRs %v (on no PDR: 0 packets)", ids)
		return
	}
	t.Error("no deletion response captured")
}

// reportCounts are where upfd's Session Report Requests to pfcpsim can
// end, counted since the test began: read by pfcpsim (its log says so for
// each), dropped by the report gate while pfcpsim waited for a response,
// and the datagrams the kernel dropped for pfcpsim's full socket. The last
// counts every datagram, not only reports: upfd's Heartbeat Requests, which
// pfcpsim never answers, can be among them.
type reportCounts struct {
	read  int
	gated int
	full  int
}

func (r *rig) reportsMark(t *testing.T) reportCounts {
	t.Helper()
	return reportCounts{
		read:  strings.Count(r.sim.log.String(), "Session Report Request received"),
		gated: int(r.sim.gate.dropped()),
		full:  int(rcvbufErrors(t, r.lab.SMF)),
	}
}

// reportsAnswered: every Session Report Request upfd sent since mark (a
// send, retransmissions counted) was read by pfcpsim and answered,
// accepted, or dropped by the report gate while pfcpsim waited for a
// response, or lost in pfcpsim's full socket: nothing else. before is the
// counts at mark.
func (r *rig) reportsAnswered(t *testing.T, what string, mark int, before reportCounts) {
	t.Helper()
	var sends, answered, refused int
	var c reportCounts
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		sends, answered, refused = 0, 0, 0
		now := r.reportsMark(t)
		c = reportCounts{read: now.read - before.read, gated: now.gated - before.gated, full: now.full - before.full}
		for _, m := range r.n4.since(mark) {
			switch {
			case m.typ == msgReportReq && m.fromUPF:
				sends++
			case m.typ == msgReportResp && !m.fromUPF:
				answered++
				if m.cause != 1 {
					refused++
				}
			}
		}
		if answered == c.read && sends-c.read-c.gated <= c.full || time.Now().After(deadline) {
			break
		}
	}
	lost := sends - c.read - c.gated
	r.figure("%s: upfd sent %d session reports; pfcpsim read %d and answered %d (%d not accepted), %d held back while it waited for a response, %d lost in its full socket (which dropped %d datagrams)",
		what, sends, c.read, answered, refused, c.gated, lost, c.full)
	if answered != c.read || refused != 0 {
		t.Errorf("%s: pfcpsim read %d session reports and answered %d, %d of them not accepted", what, c.read, answered, refused)
	}
	if lost < 0 || lost > c.full {
		t.Errorf("%s: of %d session reports %d read, %d held back: %d neither, but pfcpsim's full socket dropped %d datagrams",
			what, sends, c.read, c.gated, lost, c.full)
	}
}

// rcvbufErrors is the UDP datagrams the kernel dropped in ns for a full
// socket (RcvbufErrors): pfcpsim's is the only UDP socket in the SMF's.
func rcvbufErrors(t *testing.T, ns string) uint64 {
	t.Helper()
	var b []byte
	err := netns.Do(ns, func() (err error) {
		b, err = os.ReadFile("/proc/thread-self/net/snmp")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if n == "RcvbufErrors" && i < len(f) {
				v, _ := strconv.ParseUint(f[i], 10, 64)
				return v
			}
		}
	}
	t.Fatal("no Udp RcvbufErrors in /proc/net/snmp")
	return 0
}

// drainGNB reads whatever the gNB still has (Error Indications for a
// deleted tunnel), so that the next step counts afresh.
func (r *rig) drainGNB() {
	buf := make([]byte, 4096)
	for {
		r.gnb.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, _, err := r.gnb.ReadFromUDP(buf); err != nil {
			return
		}
	}
}

// wrap: pfcpsim's rule IDs are uint16(i), and its modification names the
// downlink FAR uint32(i+1), unwrapped: for i past 65,535 (past 6,554
// sessions of one create from baseID 1) it names a FAR the session does not
// have. upfd must refuse that (Rule creation/modification failure, the FAR
// ID), and the session must stay as it was.
func (r *rig) wrap(t *testing.T) {
	b := batch{base: 65541, count: 1, pool: "10.45.200.0/16", filters: []string{allow}}
	mark := r.n4.mark()
	r.sim.must(t, time.Minute, b.args("create")...)
	r.exchanged(t, mark, msgEstReq, msgEstResp, 1)
	mark = r.n4.mark()
	if out, _, err := r.sim.ctl(time.Minute, b.args("modify")...); err == nil {
		t.Errorf("pfcpsim modified a session whose FAR IDs wrapped: %s", out)
	}
	var got []string
	for deadline := time.Now().Add(3 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, m := range r.n4.since(mark) {
			if m.typ == msgModResp && m.fromUPF {
				got = append(got, m.String())
				if m.cause != 73 || m.offending != 108 {
					t.Errorf("upfd answered %v, want cause 73 (Rule creation/modification failure), offending IE 108 (FAR ID)", m)
				}
			}
		}
	}
	if len(got) != 1 {
		t.Errorf("upfd's answers to the modification: %v, want one", got)
	}
	r.figure("past the wrap: pfcpsim's Update FAR %d for its session %d (FAR IDs %d and %d): %v", b.i(0)+1, b.i(0), uint16(b.i(0)), uint16(b.i(0)+1), got)
	mark = r.n4.mark()
	r.sim.must(t, time.Minute, b.args("delete")...)
	r.exchanged(t, mark, msgDelReq, msgDelResp, 1)
}

// manySessions: 10,000 sessions in two batches (pfcpsim's IDs are 16 bits
// and its session numbers step by 10: one batch from baseID 1 would wrap
// them after 6,554 sessions), modified to forward, traffic through each,
// deleted; every usage report upfd sends meanwhile accounted for.
func (r *rig) manySessions(t *testing.T) {
	one := []string{allow}
	batches := []batch{{1, 6554, "10.45.0.0/16", one}, {2, 3446, "10.45.128.0/16", one}}
	const total = 10_000
	up, reports := r.n4.mark(), r.reportsMark(t)
	t.Cleanup(func() {
		if t.Failed() {
			r.timeline(t, up)
		}
	})
	phase := func(verb string, req, resp uint8, extra ...string) {
		t.Helper()
		mark := r.n4.mark()
		var took time.Duration
		for _, b := range batches {
			took += r.sim.must(t, time.Minute, b.args(verb, extra...)...)
		}
		r.exchanged(t, mark, req, resp, total)
		r.figure("10,000 sessions: %s %v, %.0f/s", verb, took.Round(time.Millisecond), total/took.Seconds())
	}
	phase("create", msgEstReq, msgEstResp)
	if n := sessionCount(t, r.lab.UPF); n != total {
		t.Fatalf("upfd holds %d sessions, want %d", n, total)
	}
	phase("modify", msgModReq, msgModResp)
	t.Run("traffic through every session", func(t *testing.T) { r.everySession(t, batches) })
	phase("delete", msgDelReq, msgDelResp)
	if n := sessionCount(t, r.lab.UPF); n != 0 {
		t.Errorf("upfd holds %d sessions after deleting them all", n)
	}
	r.reportsAnswered(t, "10,000 sessions", up, reports)
}

// everySession sends two datagrams each way through each of the 10,000
// sessions, from and to the UE's ports 5000-5010: each arrives, uplink at
// the DN host, downlink at the gNB in the session's tunnel (TEID i+1) with
// QFI 9; none is dropped.
func (r *rig) everySession(t *testing.T, batches []batch) {
	type sess struct {
		i    uint32
		ue   netip.Addr
		port uint16
	}
	var ss []sess
	ues := map[uint32]netip.Addr{}
	for _, b := range batches {
		for k := range b.count {
			ss = append(ss, sess{b.i(k), b.ue(k), uint16(5000 + k%11)})
			ues[b.i(k)] = b.ue(k)
		}
	}
	const each = 2
	n := len(ss) * each
	before := drops(t, r.lab.UPF)
	upGot, downGot := listen(r.dnRx, n), listen(r.gnb, n)
	began := time.Now()
	send(t, n, func(j int) error {
		s, num := ss[j%len(ss)], uint32(j/len(ss))
		if _, err := r.gnb.WriteToUDP(gpdu(s.i, packet(17, s.ue, dnHost, s.port, dnPort, payload(s.i, num))), n3); err != nil {
			return err
		}
		_, err := r.dnTx.WriteToUDP(payload(s.i, num), net.UDPAddrFromAddrPort(netip.AddrPortFrom(s.ue, s.port)))
		return err
	})
	sent := time.Since(began)
	up, down := map[uint32][]uint32{}, map[uint32][]uint32{}
	ups := fromDN(t, upGot.wait())
	for _, f := range ups {
		up[f.tag] = append(up[f.tag], f.n)
	}
	downs := downGot.wait()
	var wrong []string
	for _, b := range downs {
		g, err := parseGTP(b)
		if err != nil || g.typ != 0xff {
			t.Errorf("the gNB got a GTP-U message of type %d (%v)", g.typ, err)
			continue
		}
		f, err := readInner(g.inner)
		if err != nil {
			t.Error(err)
			continue
		}
		if g.teid != f.tag+1 || g.qfi != 9 || f.dst != ues[f.tag] {
			wrong = append(wrong, fmt.Sprintf("session %d's downlink to %v in TEID %d with QFI %d", f.tag, f.dst, g.teid, g.qfi))
		}
		down[f.tag] = append(down[f.tag], f.n)
	}
	var bad []string
	for _, s := range ss {
		for way, got := range map[string][]uint32{"uplink": up[s.i], "downlink": down[s.i]} {
			if slices.Sort(got); !slices.Equal(got, []uint32{0, 1}) {
				bad = append(bad, fmt.Sprintf("session %d (UE %v) %s got %v", s.i, s.ue, way, got))
			}
		}
	}
	for what, list := range map[string][]string{"sessions whose datagrams did not arrive exactly": bad, "G-PDUs in the wrong tunnel": wrong} {
		if len(list) > 0 {
			t.Errorf("%d %s, e.g.:\n%s", len(list), what, strings.Join(list[:min(len(list), 5)], "\n"))
		}
	}
	wantDrops(t, r.lab.UPF, "every session", before, nil)
	r.figure("10,000 sessions: traffic through each, 2 datagrams each way in %v: uplink %d of %d and downlink %d of %d arrived, %d sessions short or over",
		sent.Round(time.Millisecond), len(ups), n, len(downs), n, len(bad))
}

// timeline logs N4 second by second since mark: messages by type and
// direction, for the failure's evidence.
func (r *rig) timeline(t *testing.T, mark int) {
	msgs := r.n4.since(mark)
	if len(msgs) == 0 {
		return
	}
	start := msgs[0].at
	var lines []string
	for from := 0; from < len(msgs); {
		sec := int(msgs[from].at.Sub(start) / time.Second)
		to := from
		for to < len(msgs) && int(msgs[to].at.Sub(start)/time.Second) == sec {
			to++
		}
		c := count(msgs[from:to])
		var kinds []string
		for k, n := range c.byType {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		slices.Sort(kinds)
		lines = append(lines, fmt.Sprintf("s%d: %s", sec, strings.Join(kinds, "; ")))
		for _, m := range c.refused {
			lines = append(lines, "   "+m.String())
		}
		from = to
	}
	t.Logf("N4 second by second (capture lost %d frames):\n%s", r.n4.lost(), strings.Join(lines, "\n"))
}
