package pfcp

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/gtpu"
	"github.com/sluice-upf/sluice/internal/rules"
	"github.com/sluice-upf/sluice/internal/session"
)

// fastPaths: heartbeats every 200 ms, retransmitted after 100 ms, one
// retransmission, sessions of a lost peer kept 500 ms.
func fastPaths(c *Config) {
	c.Heartbeat, c.T1, c.N1, c.PeerGrace = 200*time.Millisecond, 100*time.Millisecond, 2, 500*time.Millisecond
}

// await reads what the server sends until a message satisfies want, for at
// most d.
func (n *n4) await(d time.Duration, want func(message.Message) bool) message.Message {
	n.t.Helper()
	buf := make([]byte, 65535)
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		n.smf.SetReadDeadline(deadline)
		k, _, err := n.smf.ReadFromUDP(buf)
		if err != nil {
			break
		}
		if m, err := message.Parse(buf[:k]); err == nil && want(m) {
			return m
		}
	}
	n.t.Fatalf("nothing wanted from the server within %v", d)
	return nil
}

func isType[T message.Message](m message.Message) bool { _, ok := m.(T); return ok }

func TestPrivilegedLostPeerSessionsGoAfterGraceWithUsageKept(t *testing.T) {
	n := newN4With(t, fastPaths)
	n.associate()
	if c := causeIn(n.ask(establishment(n.next(), 0x77))); c != session.CauseAccepted {
		t.Fatalf("establishment: cause %d", c)
	}
	// Answer one heartbeat: the peer is there.
	hb := n.await(time.Second, isType[*message.HeartbeatRequest])
	n.send(message.NewHeartbeatResponse(hb.Sequence(), ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0))))
	// Then go silent: lost after two sends, gone after the grace (about a
	// second; a loaded machine takes longer, so look until it is gone:
	// asking over N4 would prove the peer alive).
	for deadline := time.Now().Add(5 * time.Second); n.associations() > 0; {
		if time.Now().After(deadline) {
			t.Fatal("the silent peer's association is still there: it should be gone")
		}
		time.Sleep(100 * time.Millisecond)
	}
	n.send(message.NewSessionModificationRequest(0, 0, 1, n.next(), 0))
	if c := causeIn(n.await(time.Second, isType[*message.SessionModificationResponse])); c != session.CauseNoSession {
		t.Fatalf("the lost peer's session: cause %d, want %d: it should be gone", c, session.CauseNoSession)
	}
	// Back, not restarted: the final usage comes.
	n.send(message.NewAssociationSetupRequest(n.next(), smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0))))
	rep := n.await(time.Second, isType[*message.SessionReportRequest]).(*message.SessionReportRequest)
	if rep.SEID() != 0x77 || len(rep.UsageReport) != 1 {
		t.Errorf("kept report: SEID %#x with %d usage reports, want 0x77 with 1", rep.SEID(), len(rep.UsageReport))
	}
}

func TestPrivilegedPeerThatAnswersKeepsItsSessions(t *testing.T) {
	n := newN4With(t, fastPaths)
	n.associate()
	if c := causeIn(n.ask(establishment(n.next(), 0x78))); c != session.CauseAccepted {
		t.Fatalf("establishment: cause %d", c)
	}
	for range 6 { // 1.2 s, well past the grace
		hb := n.await(time.Second, isType[*message.HeartbeatRequest])
		n.send(message.NewHeartbeatResponse(hb.Sequence(), ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0))))
	}
	if c := causeIn(n.ask(message.NewSessionDeletionRequest(0, 0, 1, n.next(), 0))); c != session.CauseAccepted {
		t.Errorf("deletion: cause %d: the session should still be there", c)
	}
}

// associations is how many associations the server has.
func (n *n4) associations() int {
	n.t.Helper()
	as, err := n.srv.Associations(context.Background())
	if err != nil {
		n.t.Fatal(err)
	}
	return len(as)
}

// A peer that never answers our heartbeats but keeps sending its own
// (pfcpsim ignores the UPF's) is alive: any message proves it, and only
// silence may start the grace.
func TestPrivilegedPeerHeardIsNotLost(t *testing.T) {
	n := newN4With(t, fastPaths)
	n.associate()
	if c := causeIn(n.ask(establishment(n.next(), 0x79))); c != session.CauseAccepted {
		t.Fatalf("establishment: cause %d", c)
	}
	for range 15 { // 1.5 s: three times the grace, seven heartbeats unanswered
		n.send(message.NewHeartbeatRequest(n.next(), ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0)), nil))
		time.Sleep(100 * time.Millisecond)
	}
	as, err := n.srv.Associations(context.Background())
	if err != nil || len(as) != 1 || !as[0].LostSince.IsZero() {
		t.Fatalf("associations %+v (%v), want one, not lost", as, err)
	}
	n.send(message.NewSessionDeletionRequest(0, 0, 1, n.next(), 0))
	if c := causeIn(n.await(time.Second, isType[*message.SessionDeletionResponse])); c != session.CauseAccepted {
		t.Errorf("deletion: cause %d: the session should still be there", c)
	}
}

func TestPrivilegedUPFInitiatedAssociation(t *testing.T) {
	var smf netip.AddrPort
	n := newN4With(t, func(c *Config) {
		fastPaths(c)
		smf = netip.MustParseAddrPort("127.0.0.1:18805")
		c.Associate = []netip.AddrPort{smf}
	})
	// The harness's SMF socket has an ephemeral port; listen where the
	// server was told to go.
	conn := listenLoopback(t, smf)
	m := readMessage(t, conn, 2*time.Second)
	req, ok := m.(*message.AssociationSetupRequest)
	if !ok || req.NodeID == nil || req.RecoveryTimeStamp == nil || req.UPFunctionFeatures == nil {
		t.Fatalf("want an Association Setup Request with node ID, recovery time stamp and features, got %T", m)
	}
	resp := message.NewAssociationSetupResponse(req.Sequence(), smfNode, ie.NewCause(session.CauseAccepted),
		ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0)))
	writeMessage(t, conn, n.upf.AddrPort(), resp)
	// Associated: heartbeats follow, and the SMF's sessions are taken.
	for {
		if _, ok := readMessage(t, conn, 2*time.Second).(*message.HeartbeatRequest); ok {
			break
		}
	}
	if c := causeIn(n.ask(establishment(n.next(), 0x79))); c != session.CauseAccepted {
		t.Errorf("establishment after a UPF-initiated association: cause %d", c)
	}
}

// send sends m without waiting for anything.
func (n *n4) send(m message.Message) {
	n.t.Helper()
	if _, err := n.smf.WriteToUDP(encode(n.t, m), n.upf); err != nil {
		n.t.Fatal(err)
	}
}

func listenLoopback(t *testing.T, at netip.AddrPort) *net.UDPConn {
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(at))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func readMessage(t *testing.T, conn *net.UDPConn, d time.Duration) message.Message {
	t.Helper()
	buf := make([]byte, 65535)
	conn.SetReadDeadline(time.Now().Add(d))
	k, _, err := conn.ReadFromUDP(buf)
	if err != nil {
		t.Fatalf("nothing from the server: %v", err)
	}
	m, err := message.Parse(buf[:k])
	if err != nil {
		t.Fatalf("what the server sent does not decode: %v", err)
	}
	return m
}

func writeMessage(t *testing.T, conn *net.UDPConn, to netip.AddrPort, m message.Message) {
	t.Helper()
	if _, err := conn.WriteToUDPAddrPort(encode(t, m), to); err != nil {
		t.Fatal(err)
	}
}

func TestPrivilegedGTPUPathFailureIsReported(t *testing.T) {
	gtp, err := gtpu.Open(gtpu.Addrs{Access: []netip.Addr{netip.MustParseAddr("127.0.0.2")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gtp.Close() })
	n := newN4With(t, func(c *Config) {
		c.GTPU, c.EchoInterval, c.EchoRetries = gtp, 100*time.Millisecond, 2
	})
	n.associate()
	// A gNB at 127.0.0.3 that never answers Echo.
	far := ie.NewCreateFAR(ie.NewFARID(3), ie.NewApplyAction(0x02), ie.NewForwardingParameters(
		ie.NewDestinationInterface(ie.DstInterfaceAccess), ie.NewOuterHeaderCreation(0x0100, 0x300, "127.0.0.3", "", 0, 0, 0)))
	if c := causeIn(n.ask(establishment(n.next(), 0x7a, far))); c != session.CauseAccepted {
		t.Fatalf("establishment: cause %d", c)
	}
	r := n.await(2*time.Second, isType[*message.NodeReportRequest]).(*message.NodeReportRequest)
	if typ, _ := r.NodeReportType.NodeReportType(); typ != 0x01 {
		t.Errorf("node report type %#x, want UPFR", typ)
	}
	kids, _ := r.UserPlanePathFailureReport.UserPlanePathFailureReport()
	if len(kids) != 1 {
		t.Fatalf("path failure report with %d IEs, want the remote peer", len(kids))
	}
	if p, err := kids[0].RemoteGTPUPeer(); err != nil || p.IPv4Address.String() != "127.0.0.3" {
		t.Errorf("remote GTP-U peer %+v (%v), want 127.0.0.3", p, err)
	}
}

// The Echo, End Marker and Error Indication of a path leave from the side
// of its local address: the FAR's for Echo and End Marker (as the compiler
// gives the FAR its outer source), the device's the G-PDU came in on for
// an Error Indication.
func TestPrivilegedGTPUMessagesGoFromTheirPathsSide(t *testing.T) {
	rec := &recordingGTPU{calls: make(chan gtpuCall, 256)}
	d := loadDatapath(t, 1024)
	store, compiler := testRules(d)
	cfg := Config{NodeID: "198.18.4.2", Listen: netip.MustParseAddrPort("127.0.0.1:0"), Recovery: time.Unix(1_700_000_000, 0),
		GTPU: rec, EchoInterval: 50 * time.Millisecond, EchoRetries: 1000}
	srv, err := New(cfg, store, compiler, d, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	serve(t, srv)
	n := newN4Client(t, srv)
	n.associate()

	gnb, peerUPF := netip.MustParseAddr("198.18.3.1"), netip.MustParseAddr("198.18.9.1")
	toGNB := func(teid uint32) *ie.IE {
		return ie.NewOuterHeaderCreation(0x0100, teid, gnb.String(), "", 0, 0, 0)
	}
	toPeer := func(teid uint32) *ie.IE {
		return ie.NewOuterHeaderCreation(0x0100, teid, peerUPF.String(), "", 0, 0, 0)
	}
	r := n.ask(establishment(n.next(), 0x7c,
		ie.NewCreateFAR(ie.NewFARID(3), ie.NewApplyAction(0x02), ie.NewForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceAccess), toGNB(0x300))),
		ie.NewCreateFAR(ie.NewFARID(4), ie.NewApplyAction(0x02), ie.NewForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceCore), toPeer(0x900)))))
	if c := causeIn(r); c != session.CauseAccepted {
		t.Fatalf("establishment: cause %d", c)
	}
	up, _ := r.(*message.SessionEstablishmentResponse).UPFSEID.FSEID()
	// Both peers change tunnels, and get an End Marker for the old one.
	mod := n.ask(message.NewSessionModificationRequest(0, 0, up.SEID, n.next(), 0,
		ie.NewUpdateFAR(ie.NewFARID(3), ie.NewUpdateForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceAccess), toGNB(0x301), ie.NewPFCPSMReqFlags(0x02))),
		ie.NewUpdateFAR(ie.NewFARID(4), ie.NewUpdateForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceCore), toPeer(0x901), ie.NewPFCPSMReqFlags(0x02)))))
	if c := causeIn(mod); c != session.CauseAccepted {
		t.Fatalf("modification: cause %d", c)
	}
	// G-PDUs to no tunnel, one on each device.
	srv.Do(context.Background(), func() {
		srv.event(datapath.Event{Type: datapath.EventUnknownTEID, Iface: datapath.N3, TEID: 0xdead, Peer: gnb})
		srv.event(datapath.Event{Type: datapath.EventUnknownTEID, Iface: datapath.N9, TEID: 0xbeef, Peer: peerUPF})
		srv.event(datapath.Event{Type: datapath.EventExtHeader, Iface: datapath.N3, Peer: gnb})
	})

	got := map[gtpuCall]bool{}
	for _, c := range []struct {
		name string
		want gtpuCall
	}{
		{"echo to the gNB from the access side", gtpuCall{"echo", gtpu.Access, gnb, 0}},
		{"echo to the peer UPF from the core side", gtpuCall{"echo", gtpu.Core, peerUPF, 0}},
		{"end marker to the old gNB tunnel from the access side", gtpuCall{"end marker", gtpu.Access, gnb, 0x300}},
		{"end marker to the old peer UPF tunnel from the core side", gtpuCall{"end marker", gtpu.Core, peerUPF, 0x900}},
		{"error indication for a G-PDU on N3 from the access side", gtpuCall{"error indication", gtpu.Access, gnb, 0xdead}},
		{"error indication for a G-PDU on N9 from the core side", gtpuCall{"error indication", gtpu.Core, peerUPF, 0xbeef}},
		{"supported extension headers to the gNB from the access side", gtpuCall{"extension headers", gtpu.Access, gnb, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !rec.await(got, c.want, 2*time.Second) {
				t.Errorf("no %+v among %v", c.want, got)
			}
		})
	}
	for call := range got {
		if call.what != "echo" && call.from != map[netip.Addr]gtpu.Side{gnb: gtpu.Access, peerUPF: gtpu.Core}[call.to] {
			t.Errorf("%+v: from the wrong side", call)
		}
	}
}

// gtpuCall is one message the server asked for.
type gtpuCall struct {
	what string
	from gtpu.Side
	to   netip.Addr
	teid uint32
}

// recordingGTPU records what the server asks of GTP-U, and hears nothing.
type recordingGTPU struct{ calls chan gtpuCall }

func (r *recordingGTPU) record(c gtpuCall) error {
	select {
	case r.calls <- c:
	default:
	}
	return nil
}

func (r *recordingGTPU) EndMarker(from gtpu.Side, to netip.Addr, teid uint32) error {
	return r.record(gtpuCall{"end marker", from, to, teid})
}

func (r *recordingGTPU) ErrorIndication(from gtpu.Side, to netip.Addr, teid uint32) error {
	return r.record(gtpuCall{"error indication", from, to, teid})
}

func (r *recordingGTPU) SupportedExtensionHeaders(from gtpu.Side, to netip.Addr) error {
	return r.record(gtpuCall{"extension headers", from, to, 0})
}

func (r *recordingGTPU) Echo(from gtpu.Side, to netip.Addr) error {
	return r.record(gtpuCall{"echo", from, to, 0})
}

func (r *recordingGTPU) Received() <-chan gtpu.Received { return nil }

// await collects calls into got until want is among them, for at most d.
func (r *recordingGTPU) await(got map[gtpuCall]bool, want gtpuCall, d time.Duration) bool {
	for timeout := time.After(d); !got[want]; {
		select {
		case c := <-r.calls:
			got[c] = true
		case <-timeout:
			return false
		}
	}
	return true
}

// The side a FAR sends from resolves to the outer source address the rule
// compiler writes into the FAR, so that path management leaves from the
// address its G-PDUs leave from.
func TestGTPUSourceIsTheFARsOuterSource(t *testing.T) {
	n3v6, n9 := netip.MustParseAddr("2001:2:0:3::2"), netip.MustParseAddr("198.18.9.2")
	gnb, gnbV6, peerUPF := netip.MustParseAddr("198.18.3.1"), netip.MustParseAddr("2001:2:0:3::1"), netip.MustParseAddr("198.18.9.1")
	for _, c := range []struct {
		name  string
		addrs gtpu.Addrs
		dest  uint8
		peer  netip.Addr
	}{
		{"N3 toward the access network", gtpu.Addrs{Access: []netip.Addr{n3}, Core: []netip.Addr{n9}}, session.Access, gnb},
		{"N9 toward the core", gtpu.Addrs{Access: []netip.Addr{n3}, Core: []netip.Addr{n9}}, session.Core, peerUPF},
		{"N9 toward the SGi-LAN", gtpu.Addrs{Access: []netip.Addr{n3}, Core: []netip.Addr{n9}}, session.SGiLAN, peerUPF},
		{"N3 toward the core without N9", gtpu.Addrs{Access: []netip.Addr{n3}}, session.Core, peerUPF},
		{"N3 toward the CP function", gtpu.Addrs{Access: []netip.Addr{n3}}, session.CPFunc, peerUPF},
		{"IPv6 N3 toward an IPv6 gNB", gtpu.Addrs{Access: []netip.Addr{n3, n3v6}, Core: []netip.Addr{n9}}, session.Access, gnbV6},
		{"IPv6 N3 toward an IPv6 peer when N9 is IPv4", gtpu.Addrs{Access: []netip.Addr{n3, n3v6}, Core: []netip.Addr{n9}}, session.Core, gnbV6},
	} {
		t.Run(c.name, func(t *testing.T) {
			compiler := rules.NewCompiler(rules.Interfaces{Endpoints: slices.Concat(c.addrs.Access, c.addrs.Core),
				Access: c.addrs.Access, Core: c.addrs.Core}, datapath.SizesFor(16))
			x := &session.Session{SEID: 1}
			x.FARs.Put(session.FAR{ID: 1, Action: session.ActForw,
				Forw: &session.Forwarding{Dest: c.dest, OHC: &session.OHC{TEID: 0x100, Peer: c.peer}}})
			p, err := compiler.Plan(1, x)
			if err != nil {
				t.Fatal(err)
			}
			var compiled netip.Addr
			for _, op := range p.Ops {
				if put, ok := op.(datapath.PutFAR); ok {
					compiled = put.FAR.Local
				}
			}
			got, ok := c.addrs.Source(sideOf(c.dest), c.peer)
			if !ok || got != compiled {
				t.Errorf("GTP-U messages from %v (%v), G-PDUs from %v", got, ok, compiled)
			}
		})
	}
}
