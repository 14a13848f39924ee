package pfcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/rules"
	"github.com/sluice-upf/sluice/internal/session"
	"github.com/sluice-upf/sluice/internal/testenv"
)

var n3 = netip.MustParseAddr("198.18.3.2")

// n4 is a running server with a real datapath in a UPF namespace, and an
// SMF's socket on loopback to talk to it.
type n4 struct {
	t   *testing.T
	srv *Server
	smf *net.UDPConn
	upf *net.UDPAddr
	seq uint32
}

func newN4(t *testing.T, peers ...netip.Prefix) *n4 {
	return newN4With(t, func(c *Config) { c.Peers = peers })
}

// newN4With is newN4 with the server's config changed by set.
func newN4With(t *testing.T, set func(*Config)) *n4 {
	d := loadDatapath(t, 1024)
	store, compiler := testRules(d)
	cfg := Config{NodeID: "198.18.4.2", Listen: netip.MustParseAddrPort("127.0.0.1:0"), Recovery: time.Unix(1_700_000_000, 0)}
	set(&cfg)
	srv, err := New(cfg, store, compiler, d, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	serve(t, srv)
	return newN4Client(t, srv)
}

// newN4Client is an SMF's socket on loopback, talking to srv.
func newN4Client(t *testing.T, srv *Server) *n4 {
	smf, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { smf.Close() })
	return &n4{t: t, srv: srv, smf: smf, upf: net.UDPAddrFromAddrPort(srv.Addr())}
}

// loadDatapath loads a datapath on the n3 and n6 devices of a new UPF
// namespace, sized for maxSessions, and closes it at cleanup.
func loadDatapath(tb testing.TB, maxSessions int) *datapath.Datapath {
	tb.Helper()
	ns := testenv.UPF(tb)
	var d *datapath.Datapath
	err := netns.Do(ns, func() (err error) {
		d, err = datapath.Load(datapath.Options{
			Interfaces: []datapath.Interface{{Name: "n3", Role: datapath.N3}, {Name: "n6", Role: datapath.N6}},
			GTPUAddrs:  []netip.Addr{n3}, MaxSessions: maxSessions,
		})
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// testRules are the store and compiler the tests share: TEIDs
// 0x100-0xffff on the N3 address, UEs from 10.45.0.0/16 ("internet").
func testRules(d *datapath.Datapath) (*session.Store, *rules.Compiler) {
	store := session.NewStore(session.Options{TEIDFirst: 0x100, TEIDLast: 0xffff, AccessAddrs: []netip.Addr{n3},
		Pools: map[string][]netip.Prefix{"internet": {netip.MustParsePrefix("10.45.0.0/16")}}, MaxSessions: 1000})
	return store, newCompiler(d)
}

// newCompiler compiles for a datapath with one GTP-U address, N3's.
func newCompiler(d *datapath.Datapath) *rules.Compiler {
	return rules.NewCompiler(rules.Interfaces{Endpoints: []netip.Addr{n3}, Access: []netip.Addr{n3}}, d.Sizes())
}

// serve runs srv until cleanup.
func serve(tb testing.TB, srv *Server) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Serve(ctx) }()
	tb.Cleanup(func() { cancel(); <-done })
}

// raw sends b and returns the response's bytes.
func (n *n4) raw(b []byte) []byte {
	n.t.Helper()
	if _, err := n.smf.WriteToUDP(b, n.upf); err != nil {
		n.t.Fatal(err)
	}
	return n.read()
}

// read is the next message to the SMF, waited for 2 s at most.
func (n *n4) read() []byte {
	n.t.Helper()
	buf := make([]byte, 65535)
	n.smf.SetReadDeadline(time.Now().Add(2 * time.Second))
	k, _, err := n.smf.ReadFromUDP(buf)
	if err != nil {
		n.t.Fatalf("no response: %v", err)
	}
	return buf[:k]
}

// ask sends m and decodes the response.
func (n *n4) ask(m message.Message) message.Message {
	n.t.Helper()
	resp, err := message.Parse(n.raw(encode(n.t, m)))
	if err != nil {
		n.t.Fatalf("response does not decode: %v", err)
	}
	return resp
}

func encode(t *testing.T, m message.Message) []byte {
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func (n *n4) next() uint32 { n.seq++; return n.seq }

var smfNode = ie.NewNodeID("198.18.4.1", "", "")

func (n *n4) associate() {
	n.t.Helper()
	r := n.ask(message.NewAssociationSetupRequest(n.next(), smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0))))
	if c := causeIn(r); c != session.CauseAccepted {
		n.t.Fatalf("association setup: cause %d", c)
	}
}

func causeIn(m message.Message) uint8 {
	var c *ie.IE
	switch m := m.(type) {
	case *message.AssociationSetupResponse:
		c = m.Cause
	case *message.SessionEstablishmentResponse:
		c = m.Cause
	case *message.SessionModificationResponse:
		c = m.Cause
	case *message.SessionDeletionResponse:
		c = m.Cause
	}
	if c == nil {
		return 0
	}
	v, _ := c.Cause()
	return v
}

func offendingIn(m message.Message) uint16 {
	var o *ie.IE
	switch m := m.(type) {
	case *message.SessionEstablishmentResponse:
		o = m.OffendingIE
	case *message.SessionModificationResponse:
		o = m.OffendingIE
	}
	if o == nil {
		return 0
	}
	v, _ := o.OffendingIE()
	return v
}

// establishment is what an Open5GS-like SMF sends: uplink on a chosen
// F-TEID (CHOOSE ID 5, outer header removal GTP-U/UDP/IPv4), downlink to
// the UE, a QER with MBR and QFI 9 on both, a volume URR.
func establishment(seq uint32, cpSEID uint64, extra ...*ie.IE) *message.SessionEstablishmentRequest {
	ies := []*ie.IE{
		smfNode,
		ie.NewFSEID(cpSEID, net.IPv4(198, 18, 4, 1), nil),
		ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0d, 0, nil, nil, 5),
				ie.NewNetworkInstance("internet"), ie.NewUEIPAddress(0x02, "10.45.0.2", "", 0, 0)),
			ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1), ie.NewQERID(1), ie.NewURRID(1)),
		ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewNetworkInstance("internet"),
				ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0)),
			ie.NewFARID(2), ie.NewQERID(1), ie.NewURRID(1)),
		ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), ie.NewNetworkInstance("internet"))),
		ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x0c)), // BUFF|NOCP until the gNB is known
		ie.NewCreateQER(ie.NewQERID(1), ie.NewGateStatus(0, 0), ie.NewMBR(100000, 200000), ie.NewQFI(9)),
		ie.NewCreateURR(ie.NewURRID(1), ie.NewMeasurementMethod(0, 1, 0), ie.NewReportingTriggers(0x00, 0x00, 0x00)),
	}
	return message.NewSessionEstablishmentRequest(0, 0, 0, seq, 0, append(ies, extra...)...)
}

func TestPrivilegedAssociationAndHeartbeat(t *testing.T) {
	n := newN4(t)
	hb := n.ask(message.NewHeartbeatRequest(n.next(), ie.NewRecoveryTimeStamp(time.Now()), nil))
	r, ok := hb.(*message.HeartbeatResponse)
	if !ok {
		t.Fatalf("heartbeat answered with %T", hb)
	}
	if ts, _ := r.RecoveryTimeStamp.RecoveryTimeStamp(); !ts.Equal(time.Unix(1_700_000_000, 0)) {
		t.Errorf("recovery time stamp %v", ts)
	}
	as := n.ask(message.NewAssociationSetupRequest(n.next(), smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0))))
	resp := as.(*message.AssociationSetupResponse)
	if c := causeIn(resp); c != session.CauseAccepted {
		t.Fatalf("cause %d", c)
	}
	if id, _ := resp.NodeID.NodeID(); id != "198.18.4.2" {
		t.Errorf("node ID %q", id)
	}
	if resp.UPFunctionFeatures == nil || !bytes.Equal(resp.UPFunctionFeatures.Payload, []byte{0x10, 0x01, 0x14, 0x04}) {
		t.Errorf("UP function features %v, want FTUP, EMPU, UEIP, MNOP and VTIME only", resp.UPFunctionFeatures)
	}
}

func TestPrivilegedSessionLifecycle(t *testing.T) {
	n := newN4(t)
	n.associate()
	r := n.ask(establishment(n.next(), 0xabc)).(*message.SessionEstablishmentResponse)
	if c := causeIn(r); c != session.CauseAccepted {
		t.Fatalf("establishment: cause %d offending %d", c, offendingIn(r))
	}
	if r.Header.SEID != 0xabc {
		t.Errorf("response SEID %#x, want the SMF's 0xabc", r.Header.SEID)
	}
	up, _ := r.UPFSEID.FSEID()
	if len(r.CreatedPDR) != 1 {
		t.Fatalf("%d Created PDRs, want the uplink one", len(r.CreatedPDR))
	}
	kids, _ := r.CreatedPDR[0].CreatedPDR()
	var fteid *ie.FTEIDFields
	for _, k := range kids {
		if k.Type == ie.FTEID {
			fteid, _ = k.FTEID()
		}
	}
	if fteid == nil || fteid.TEID != 0x100 || !fteid.IPv4Address.Equal(n3.AsSlice()) {
		t.Errorf("created F-TEID %+v, want 0x100 at %v", fteid, n3)
	}

	// The gNB answers: the downlink FAR forwards into its tunnel.
	mod := message.NewSessionModificationRequest(0, 0, up.SEID, n.next(), 0,
		ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
			ie.NewUpdateForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
				ie.NewOuterHeaderCreation(0x0100, 0x200, "198.18.3.1", "", 0, 0, 0))))
	if c := causeIn(n.ask(mod)); c != session.CauseAccepted {
		t.Fatalf("modification: cause %d", c)
	}

	del := n.ask(message.NewSessionDeletionRequest(0, 0, up.SEID, n.next(), 0))
	if c := causeIn(del); c != session.CauseAccepted {
		t.Fatalf("deletion: cause %d", c)
	}
	if c := causeIn(n.ask(message.NewSessionDeletionRequest(0, 0, up.SEID, n.next(), 0))); c != session.CauseNoSession {
		t.Errorf("second deletion: cause %d, want %d", c, session.CauseNoSession)
	}
}

// A cached answer stands only for the same request within one
// association: an SMF that associates again and reuses a sequence number,
// byte for byte, gets its request applied, not an answer for a session
// that is gone (pfcpsim did; 3 of 2,000 sessions were lost).
func TestPrivilegedNoCachedAnswerAcrossAssociations(t *testing.T) {
	for _, end := range []struct {
		name string
		end  func(n *n4)
	}{
		{"release", func(n *n4) {
			r := n.ask(message.NewAssociationReleaseRequest(n.next(), smfNode))
			if c, _ := r.(*message.AssociationReleaseResponse).Cause.Cause(); c != session.CauseAccepted {
				n.t.Fatalf("release: cause %d", c)
			}
		}},
		{"setup again, as a restarted SMF", func(n *n4) {
			r := n.ask(message.NewAssociationSetupRequest(n.next(), smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_700_000_000, 0))))
			if c := causeIn(r); c != session.CauseAccepted {
				n.t.Fatalf("setup: cause %d", c)
			}
		}},
	} {
		t.Run(end.name, func(t *testing.T) {
			n := newN4(t)
			n.associate()
			b := encode(t, establishment(100, 0xabc))
			first, _ := message.Parse(n.raw(b))
			up, _ := first.(*message.SessionEstablishmentResponse).UPFSEID.FSEID()
			end.end(n)
			n.associate()
			again, err := message.Parse(n.raw(b))
			if err != nil {
				t.Fatal(err)
			}
			r := again.(*message.SessionEstablishmentResponse)
			if c := causeIn(r); c != session.CauseAccepted {
				t.Fatalf("the same establishment in the new association: cause %d", c)
			}
			if f, _ := r.UPFSEID.FSEID(); f.SEID == up.SEID {
				t.Errorf("answered from the cache: UP SEID %#x again, for a session deleted with its association", f.SEID)
			}
			if c := causeIn(n.ask(message.NewSessionDeletionRequest(0, 0, up.SEID, n.next(), 0))); c != session.CauseNoSession {
				t.Errorf("the old session: cause %d, want %d (gone)", c, session.CauseNoSession)
			}
		})
	}
}

// A Session Deletion Request may carry a CP F-SEID (Table 7.5.6-1 since
// Release 18; pfcpsim sends one): the response goes to it.
func TestPrivilegedDeletionAnswersTheCPFSEIDItCarries(t *testing.T) {
	n := newN4(t)
	n.associate()
	r := n.ask(establishment(n.next(), 0xabc)).(*message.SessionEstablishmentResponse)
	up, _ := r.UPFSEID.FSEID()
	del := message.NewSessionDeletionRequest(0, 0, up.SEID, n.next(), 0)
	del.IEs = append(del.IEs, ie.NewFSEID(0xdef, net.IPv4(198, 18, 4, 1), nil))
	resp := n.ask(del)
	if c := causeIn(resp); c != session.CauseAccepted || resp.SEID() != 0xdef {
		t.Errorf("deletion: cause %d, header SEID %#x; want 1 and the request's CP SEID 0xdef", c, resp.SEID())
	}
}

func TestPrivilegedRetransmissionIsAnsweredNotApplied(t *testing.T) {
	n := newN4(t)
	n.associate()
	b := encode(t, establishment(n.next(), 0xabc))
	first, second := n.raw(b), n.raw(b)
	if !bytes.Equal(first, second) {
		t.Errorf("a retransmission got another answer")
	}
	// Applied twice, the second would have been refused: the CP F-SEID in use.
	r, _ := message.Parse(first)
	if c := causeIn(r); c != session.CauseAccepted {
		t.Errorf("cause %d", c)
	}
	again := n.ask(establishment(n.next(), 0xabc))
	if c := causeIn(again); c != session.CauseRequestRejected {
		t.Errorf("a new request for the same CP F-SEID: cause %d, want %d", c, session.CauseRequestRejected)
	}
}

func TestPrivilegedRefusals(t *testing.T) {
	for _, c := range []struct {
		name      string
		associate bool
		req       func(seq uint32) message.Message
		cause     uint8
		offending uint16
	}{
		{"no association", false, func(seq uint32) message.Message { return establishment(seq, 1) },
			session.CauseNoAssociation, 0},
		{"no CP F-SEID", true, func(seq uint32) message.Message {
			m := establishment(seq, 1)
			m.CPFSEID = nil
			return m
		}, session.CauseMandatoryIEMissing, ie.FSEID},
		{"PDR naming a FAR that is not there", true, func(seq uint32) message.Message {
			return establishment(seq, 1, ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(10),
				ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0)), ie.NewFARID(9)))
		}, session.CauseRuleFailure, ie.FARID},
		{"two PDRs with one ID", true, func(seq uint32) message.Message {
			return establishment(seq, 1, ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(10),
				ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0)), ie.NewFARID(1)))
		}, session.CauseMandatoryIEIncorrect, ie.PDRID},
		{"PDR without precedence", true, func(seq uint32) message.Message {
			return establishment(seq, 1, ie.NewCreatePDR(ie.NewPDRID(3),
				ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0)), ie.NewFARID(1)))
		}, session.CauseMandatoryIEMissing, ie.Precedence},
		{"an application to detect", true, func(seq uint32) message.Message {
			return establishment(seq, 1, ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(10),
				ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewApplicationID("youtube")), ie.NewFARID(1)))
		}, session.CauseRuleFailure, ie.ApplicationID},
		{"a flow description that does not parse", true, func(seq uint32) message.Message {
			return establishment(seq, 1, ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(10),
				ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0),
					ie.NewSDFFilter("permit out udpx from any to assigned", "", "", "", 0)), ie.NewFARID(1)))
		}, session.CauseMandatoryIEIncorrect, ie.SDFFilter},
		{"modification of a session that is not there", true, func(seq uint32) message.Message {
			return message.NewSessionModificationRequest(0, 0, 0x999, seq, 0, ie.NewRemovePDR(ie.NewPDRID(1)))
		}, session.CauseNoSession, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := newN4(t)
			if c.associate {
				n.associate()
			}
			r := n.ask(c.req(n.next()))
			if got := causeIn(r); got != c.cause || offendingIn(r) != c.offending {
				t.Errorf("cause %d offending IE %d, want %d and %d", got, offendingIn(r), c.cause, c.offending)
			}
			// Nothing was applied: the plain session still fits.
			if c.associate {
				if got := causeIn(n.ask(establishment(n.next(), 1))); got != session.CauseAccepted {
					t.Errorf("after the refusal a good establishment got cause %d", got)
				}
			}
		})
	}
}

func TestPrivilegedPeerNotAllowed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		peers []netip.Prefix
		want  uint8
	}{
		{"another SMF's address", []netip.Prefix{netip.MustParsePrefix("198.18.4.1/32")}, session.CauseRequestRejected},
		{"another network", []netip.Prefix{netip.MustParsePrefix("198.18.4.0/24")}, session.CauseRequestRejected},
		{"the SMF's network", []netip.Prefix{netip.MustParsePrefix("198.18.4.0/24"), netip.MustParsePrefix("127.0.0.0/8")}, session.CauseAccepted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newN4(t, tc.peers...)
			r := n.ask(message.NewAssociationSetupRequest(n.next(), smfNode, ie.NewRecoveryTimeStamp(time.Now())))
			if c := causeIn(r); c != tc.want {
				t.Errorf("cause %d, want %d", c, tc.want)
			}
		})
	}
}

// Floods leave no mark: heartbeats and refusals to peers that are not
// allowed are answered without being kept, and one address holds a
// bounded number of associations, however many Node IDs it makes up.
func TestPrivilegedFloodsAreBounded(t *testing.T) {
	d := newDirect(t, netip.MustParsePrefix("127.0.0.0/8"))
	for i := range 1000 {
		d.send(t, encode(t, message.NewHeartbeatRequest(uint32(i+1), ie.NewRecoveryTimeStamp(smfRecovery), nil)))
	}
	if n := len(d.s.cache.index); n != 0 {
		t.Errorf("%d responses kept after 1,000 heartbeats, want none", n)
	}
	for i := range maxAssociationsPerAddress + 1 {
		node := ie.NewNodeID("", "", fmt.Sprintf("smf-%d.example.org", i))
		a := decodeAnswer(t, d.send(t, encode(t, message.NewAssociationSetupRequest(d.next(), node, ie.NewRecoveryTimeStamp(smfRecovery)))))
		want := session.CauseAccepted
		if i == maxAssociationsPerAddress {
			want = session.CauseNoResources
		}
		if a.cause != want {
			t.Errorf("association %d from one address: cause %d, want %d", i+1, a.cause, want)
		}
	}
	if n := len(d.s.assocs); n != maxAssociationsPerAddress {
		t.Errorf("%d associations from one address, want the bound, %d", n, maxAssociationsPerAddress)
	}

	other := newDirect(t, netip.MustParsePrefix("198.18.4.1/32")) // the test's socket is not allowed there
	for i := range 100 {
		other.send(t, encode(t, message.NewAssociationSetupRequest(uint32(i+1), smfNode, ie.NewRecoveryTimeStamp(smfRecovery))))
	}
	if n := len(other.s.cache.index); n != 0 {
		t.Errorf("%d refusals to a peer that is not allowed kept, want none", n)
	}
}
