package pfcp

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/gtpu"
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
	// second; a loaded machine takes longer, so ask until it is gone).
	for deadline := time.Now().Add(5 * time.Second); ; {
		time.Sleep(200 * time.Millisecond)
		n.send(message.NewSessionModificationRequest(0, 0, 1, n.next(), 0))     // changes nothing
		r := n.await(time.Second, isType[*message.SessionModificationResponse]) // past the heartbeats sent meanwhile
		if c := causeIn(r); c == session.CauseNoSession {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the lost peer's session: cause %d, want %d: it should be gone", c, session.CauseNoSession)
		}
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
	gtp, err := gtpu.Listen(netip.MustParseAddr("127.0.0.2"))
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
