package pfcp

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/session"
)

// periodicSession asks for a session whose one URR reports every second.
func periodicSession(seq uint32, cpSEID uint64, ue string) message.Message {
	return message.NewSessionEstablishmentRequest(0, 0, 0, seq, 0, smfNode,
		ie.NewFSEID(cpSEID, net.IPv4(198, 18, 4, 1), nil),
		ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, ue, "", 0, 0)),
			ie.NewFARID(1), ie.NewURRID(1)),
		ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x01)),
		ie.NewCreateURR(ie.NewURRID(1), ie.NewMeasurementMethod(0, 1, 0), ie.NewReportingTriggers(0x01, 0, 0),
			ie.NewMeasurementPeriod(time.Second)))
}

// An SMF that does not answer its reports is not buried: at most
// maxReportsOut of them are in flight to it, and once it answers, every
// session's reports come again.
func TestPrivilegedReportsToASlowSMFAreBounded(t *testing.T) {
	const sessions = 2 * maxReportsOut
	n := newN4(t)
	n.associate()
	unanswered := map[uint32]bool{}
	for i := range sessions {
		ue := fmt.Sprintf("10.45.%d.%d", 1+i/250, 1+i%250)
		if c := causeIn(askPastReports(n, periodicSession(n.next(), uint64(0x1000+i), ue), unanswered)); c != session.CauseAccepted {
			t.Fatalf("establishment %d: cause %d", i, c)
		}
	}
	// Two seconds unanswered: each session would have reported twice.
	buf := make([]byte, 65535)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		n.smf.SetReadDeadline(deadline)
		k, _, err := n.smf.ReadFromUDP(buf)
		if err != nil {
			break
		}
		if m, err := message.Parse(buf[:k]); err == nil && m.MessageType() == message.MsgTypeSessionReportRequest {
			unanswered[m.Sequence()] = true
		}
	}
	if len(unanswered) != maxReportsOut {
		t.Errorf("%d reports in flight to an SMF that answers none, want the bound, %d", len(unanswered), maxReportsOut)
	}
	// Answered from now on: every session reports.
	reported := map[uint64]bool{}
	for deadline := time.Now().Add(5 * time.Second); len(reported) < sessions && time.Now().Before(deadline); {
		n.smf.SetReadDeadline(deadline)
		k, _, err := n.smf.ReadFromUDP(buf)
		if err != nil {
			break
		}
		m, err := message.Parse(buf[:k])
		if err != nil || m.MessageType() != message.MsgTypeSessionReportRequest {
			continue
		}
		reported[m.SEID()] = true
		n.send(message.NewSessionReportResponse(0, 0, m.SEID(), m.Sequence(), 0, ie.NewCause(session.CauseAccepted)))
	}
	if len(reported) != sessions {
		t.Errorf("%d of %d sessions reported once the SMF answered", len(reported), sessions)
	}
}

// askPastReports sends m and returns its response, noting in reports the
// sequence numbers of the Session Report Requests that come before it: on
// a busy host establishing the sessions takes more than the first
// sessions' one-second period (establishment 202 got a report).
func askPastReports(n *n4, m message.Message, reports map[uint32]bool) message.Message {
	n.t.Helper()
	resp, err := message.Parse(n.raw(encode(n.t, m)))
	for err == nil && resp.MessageType() == message.MsgTypeSessionReportRequest {
		reports[resp.Sequence()] = true
		resp, err = message.Parse(n.read())
	}
	if err != nil {
		n.t.Fatalf("response does not decode: %v", err)
	}
	return resp
}
