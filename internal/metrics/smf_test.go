package metrics

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/pfcp"
	"github.com/sluice-upf/sluice/internal/testenv"
)

// smf is the test's SMF: one request at a time, each answered before the
// next, nothing sent again, so that the UPF's counts are known exactly.
type smf struct {
	t    *testing.T
	conn *net.UDPConn
	upf  *net.UDPAddr
	seq  uint32
}

func dialSMF(t *testing.T, ns string) *smf {
	return &smf{t: t, conn: testenv.ListenUDP(t, ns, addrSMF.String()+":8805"),
		upf: &net.UDPAddr{IP: addrN4.AsSlice(), Port: 8805}}
}

func smfNodeID() *ie.IE { return ie.NewNodeID(addrSMF.String(), "", "") }

func (s *smf) next() uint32 { s.seq++; return s.seq }

func (s *smf) send(m message.Message) {
	s.t.Helper()
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.conn.WriteToUDP(b, s.upf); err != nil {
		s.t.Fatal(err)
	}
}

// read waits for the UPF's next message.
func (s *smf) read() message.Message {
	s.t.Helper()
	buf := make([]byte, 65535)
	s.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	k, _, err := s.conn.ReadFromUDP(buf)
	if err != nil {
		s.t.Fatalf("nothing from the UPF: %v", err)
	}
	m, err := message.Parse(buf[:k])
	if err != nil {
		s.t.Fatalf("the UPF sent what does not decode: %v", err)
	}
	return m
}

// ask sends a request and returns the UPF's answer, with its cause.
func (s *smf) ask(m message.Message) (message.Message, string) {
	s.t.Helper()
	s.send(m)
	r := s.read()
	if r.Sequence() != m.Sequence() {
		s.t.Fatalf("%s answered with %s, sequence %d for %d", m.MessageTypeName(), r.MessageTypeName(), r.Sequence(), m.Sequence())
	}
	return r, causeOf(r)
}

func causeOf(m message.Message) string {
	var c *ie.IE
	switch r := m.(type) {
	case *message.AssociationSetupResponse:
		c = r.Cause
	case *message.SessionEstablishmentResponse:
		c = r.Cause
	case *message.SessionModificationResponse:
		c = r.Cause
	}
	if c == nil {
		return "none"
	}
	v, err := c.Cause()
	if err != nil {
		return "undecodable"
	}
	return pfcp.CauseName(v)
}

const accepted = "Request accepted (success)"

func (s *smf) accept(m message.Message) message.Message {
	s.t.Helper()
	r, cause := s.ask(m)
	if cause != accepted {
		s.t.Fatalf("%s: %s", m.MessageTypeName(), cause)
	}
	return r
}

func (s *smf) refused(m message.Message, want string) {
	s.t.Helper()
	if _, cause := s.ask(m); cause != want {
		s.t.Fatalf("%s: %s, want %s", m.MessageTypeName(), cause, want)
	}
}

func (s *smf) heartbeat() {
	s.t.Helper()
	if r, _ := s.ask(message.NewHeartbeatRequest(s.next(), ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0)), nil)); r.MessageType() != message.MsgTypeHeartbeatResponse {
		s.t.Fatalf("heartbeat answered with %s", r.MessageTypeName())
	}
}

// establish sets up the session of UE ue, its downlink FAR made by
// downlink, and returns the uplink TEID the UPF chose.
func (s *smf) establish(ue netip.Addr, downlink func() *ie.IE) uint32 {
	s.t.Helper()
	r := s.accept(establishment(s.next(), uint64(s.seq), ue, downlink)).(*message.SessionEstablishmentResponse)
	for _, c := range r.CreatedPDR {
		if f, err := c.FTEID(); err == nil {
			return f.TEID
		}
	}
	s.t.Fatal("no F-TEID in the Created PDRs")
	return 0
}

// establishment is a session with an uplink PDR on an F-TEID the UPF
// chooses and a downlink PDR on the UE's address.
func establishment(seq uint32, cpSEID uint64, ue netip.Addr, downlink func() *ie.IE) *message.SessionEstablishmentRequest {
	ni := ie.NewNetworkInstance("internet")
	return message.NewSessionEstablishmentRequest(0, 0, 0, seq, 0,
		smfNodeID(), ie.NewFSEID(cpSEID, addrSMF.AsSlice(), nil),
		ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0d, 0, nil, nil, 5), ni),
			ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1), ie.NewQERID(1)),
		ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ni, ie.NewUEIPAddress(0x06, ue.String(), "", 0, 0)),
			ie.NewFARID(2), ie.NewQERID(1)),
		ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), ni)),
		downlink(),
		ie.NewCreateQER(ie.NewQERID(1), ie.NewGateStatus(0, 0), ie.NewQFI(9)),
	)
}

// teidGNB is the gNB's downlink TEID.
const teidGNB = 0x1001

func forwardToGNB() *ie.IE {
	return ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
		ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
			ie.NewOuterHeaderCreation(0x0100, teidGNB, addrGNB.String(), "", 0, 0, 0)))
}

// bufferAndNotify: BUFF|NOCP, as an SMF sets it while the UE is idle.
func bufferAndNotify() *ie.IE { return ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x0c)) }

// unknownType is a well-formed header of message type 99, which TS 29.244
// leaves undefined.
func unknownType(seq uint32) message.Message {
	return message.NewGenericWithoutSEID(99, seq)
}

// answerReport reads the UPF's Session Report Request, checks its report
// type, and accepts it.
func (s *smf) answerReport(want *ie.IE) {
	s.t.Helper()
	m := s.read()
	r, ok := m.(*message.SessionReportRequest)
	if !ok {
		s.t.Fatalf("the UPF sent %s, want a Session Report Request", m.MessageTypeName())
	}
	if r.ReportType == nil || string(r.ReportType.Payload) != string(want.Payload) {
		s.t.Fatalf("report type %v, want %v", r.ReportType, want)
	}
	s.send(message.NewSessionReportResponse(0, 0, r.SEID(), r.Sequence(), 0, ie.NewCause(ie.CauseRequestAccepted)))
}
