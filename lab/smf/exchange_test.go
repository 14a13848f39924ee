package smf

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/topo"
)

// answerCopy answers only the nth copy of each request.
func answerCopy(n int) func(message.Message, int) message.Message {
	return func(m message.Message, copy int) message.Message {
		if copy != n {
			return nil
		}
		return accept(m, copy)
	}
}

// TestPrivilegedRetransmission: a request goes again every T1, the same
// bytes under the same sequence number, until it is answered or has been
// sent N1 times; what does not answer it is passed over.
func TestPrivilegedRetransmission(t *testing.T) {
	testenv.RequirePrivileges(t)
	for _, tc := range []struct {
		name   string
		answer func(message.Message, int) message.Message
		copies int   // of the request that arrive
		err    error // of the request
		stray  int
	}{
		{name: "answered at once", answer: answerCopy(1), copies: 1},
		{name: "answered on the second copy", answer: answerCopy(2), copies: 2},
		{name: "answered on the N1th copy", answer: answerCopy(3), copies: 3},
		{name: "never answered: given up after N1 sends", answer: answerCopy(0), copies: 3, err: ErrTimeout},
		{name: "an answer of another type is not the answer", copies: 2, stray: 1,
			answer: func(m message.Message, copy int) message.Message {
				if copy == 1 {
					return message.NewHeartbeatResponse(m.Sequence(), ie.NewRecoveryTimeStamp(fakeRecovery))
				}
				return accept(m, copy)
			}},
		{name: "an answer with another sequence number is not the answer", copies: 2, stray: 1,
			answer: func(m message.Message, copy int) message.Message {
				r := accept(m, copy)
				if copy == 1 {
					r.SetSequenceNumber(m.Sequence() + 100)
				}
				return r
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, cfg := newFakeUPF(t, tc.answer)
			c := dialFake(t, cfg)
			if err := c.Associate(context.Background()); !errors.Is(err, tc.err) {
				t.Fatalf("association: %v, want %v", err, tc.err)
			}
			got := f.sent(1) // the client's first request
			if len(got) != tc.copies {
				t.Errorf("%d copies came, want %d", len(got), tc.copies)
			}
			for i, w := range got {
				if !bytes.Equal(w, got[0]) {
					t.Errorf("copy %d differs from the first: % x", i+1, w)
				}
			}
			if k := c.Counters(); k.Stray != tc.stray {
				t.Errorf("%d stray answers, want %d", k.Stray, tc.stray)
			}
		})
	}
}

// TestPrivilegedWindow: no more than the window's requests are in flight,
// and the rest follow as answers come.
func TestPrivilegedWindow(t *testing.T) {
	testenv.RequirePrivileges(t)
	const window, n = 8, 40
	released := make(chan struct{})
	f, cfg := newFakeUPF(t, func(m message.Message, copy int) message.Message {
		if _, ok := m.(*message.AssociationSetupRequest); ok {
			return accept(m, copy)
		}
		select {
		case <-released:
			return accept(m, copy)
		default:
			return nil // held: the client sends it again after T1
		}
	})
	cfg.Window, cfg.T1, cfg.N1 = window, 200*time.Millisecond, 10
	c := dialFake(t, cfg)
	if err := c.Associate(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Establish(context.Background(), n); done <- err }()

	for deadline := time.Now().Add(2 * time.Second); f.requests() < 1+window && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // time for a request beyond the window to show
	if got := f.requests() - 1; got != window {
		t.Errorf("%d establishments in flight unanswered, want the window's %d", got, window)
	}
	close(released)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("establishments did not finish once answered")
	}
	if got := len(c.Sessions()); got != n {
		t.Errorf("%d sessions, want %d", got, n)
	}
}

// requests counts the distinct requests that came.
func (f *fakeUPF) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.wires)
}

// TestPrivilegedAnswersUPF: what the UPF asks is answered Request
// accepted, to the right SEID and with the association's Recovery Time
// Stamp, and counted.
func TestPrivilegedAnswersUPF(t *testing.T) {
	testenv.RequirePrivileges(t)
	f, cfg := newFakeUPF(t, accept)
	c := dialFake(t, cfg)
	ctx := context.Background()
	if err := c.Associate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Establish(ctx, 1); err != nil {
		t.Fatal(err)
	}
	s := c.Sessions()[0]
	usage := ie.NewReportType(0, 0, 1, 0)
	for _, tc := range []struct {
		name    string
		req     message.Message
		seid    uint64 // of the answer
		cause   uint8
		nodeID  bool // the answer carries ours
		reports int  // the count after it
	}{
		{name: "heartbeat", req: message.NewHeartbeatRequest(7001, ie.NewRecoveryTimeStamp(fakeRecovery), nil), cause: ie.CauseRequestAccepted},
		{name: "usage report of a session", req: message.NewSessionReportRequest(0, 0, s.CPSEID, 7002, 0, usage),
			seid: s.UPSEID, cause: ie.CauseRequestAccepted, reports: 1},
		{name: "report of a session we do not have", req: message.NewSessionReportRequest(0, 0, 0xbad, 7003, 0, usage),
			cause: ie.CauseSessionContextNotFound, reports: 2},
		{name: "node report", req: message.NewNodeReportRequest(7004, ie.NewNodeID(topo.UPFN4.String(), "", ""), ie.NewNodeReportType(0x01)),
			cause: ie.CauseRequestAccepted, nodeID: true, reports: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.ask(t, tc.req)
			if r.Sequence() != tc.req.Sequence() || r.MessageType() != tc.req.MessageType()+1 {
				t.Fatalf("answered with a %s, sequence %d", r.MessageTypeName(), r.Sequence())
			}
			switch r := r.(type) {
			case *message.HeartbeatResponse:
				if ts, err := r.RecoveryTimeStamp.RecoveryTimeStamp(); err != nil || !ts.Equal(c.recovery) {
					t.Errorf("Recovery Time Stamp %v (%v), want the association's %v", ts, err, c.recovery)
				}
			case *message.SessionReportResponse:
				if got, _ := r.Cause.Cause(); got != tc.cause || r.SEID() != tc.seid {
					t.Errorf("cause %d to SEID %#x, want cause %d to %#x", got, r.SEID(), tc.cause, tc.seid)
				}
			case *message.NodeReportResponse:
				id, _ := r.NodeID.NodeID()
				if got, _ := r.Cause.Cause(); got != tc.cause || id != topo.SMFN4.String() {
					t.Errorf("cause %d from node %q, want cause %d from %v", got, id, tc.cause, topo.SMFN4)
				}
			}
			if k := c.Counters(); k.Reports != tc.reports {
				t.Errorf("%d session reports counted, want %d", k.Reports, tc.reports)
			}
		})
	}
	if k := c.Counters(); k.Heartbeats != 1 || k.NodeReports != 1 {
		t.Errorf("counted %d heartbeats and %d node reports, want 1 each", k.Heartbeats, k.NodeReports)
	}
}

// TestPrivilegedWrongAnswers: an accepted answer that is not as it should
// be fails the request, naming the session.
func TestPrivilegedWrongAnswers(t *testing.T) {
	testenv.RequirePrivileges(t)
	for _, tc := range []struct {
		name   string
		change func(r *message.SessionEstablishmentResponse)
		want   string
	}{
		{"addressed to another SEID", func(r *message.SessionEstablishmentResponse) { r.Header.SEID++ }, "answered to SEID 0x2"},
		{"without a UP F-SEID", func(r *message.SessionEstablishmentResponse) { r.UPFSEID = nil }, "no UP F-SEID"},
		{"without the chosen F-TEID", func(r *message.SessionEstablishmentResponse) { r.CreatedPDR = nil }, "no Created PDR with an F-TEID for PDR 1"},
		{"without a cause", func(r *message.SessionEstablishmentResponse) { r.Cause = nil }, "without a Cause"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cfg := newFakeUPF(t, func(m message.Message, copy int) message.Message {
				r := accept(m, copy)
				if est, ok := r.(*message.SessionEstablishmentResponse); ok {
					tc.change(est)
				}
				return r
			})
			c := dialFake(t, cfg)
			if err := c.Associate(context.Background()); err != nil {
				t.Fatal(err)
			}
			_, err := c.Establish(context.Background(), 1)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "session 0x1 (UE 10.32.0.1)") {
				t.Errorf("got %v, want an error about session 0x1 saying %q", err, tc.want)
			}
			if n := len(c.Sessions()); n != 0 {
				t.Errorf("%d sessions recorded from a wrong answer", n)
			}
		})
	}
}

// TestPrivilegedHeartbeat: the client asks the UPF whether it is there
// and notices when it has restarted.
func TestPrivilegedHeartbeat(t *testing.T) {
	testenv.RequirePrivileges(t)
	for _, tc := range []struct {
		name     string
		recovery time.Time // in the Heartbeat Responses
		restarts bool
	}{
		{"the same UPF", fakeRecovery, false},
		{"a restarted UPF", fakeRecovery.Add(time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cfg := newFakeUPF(t, func(m message.Message, copy int) message.Message {
				if hb, ok := m.(*message.HeartbeatRequest); ok {
					return message.NewHeartbeatResponse(hb.Sequence(), ie.NewRecoveryTimeStamp(tc.recovery))
				}
				return accept(m, copy)
			})
			cfg.Heartbeat = 20 * time.Millisecond
			c := dialFake(t, cfg)
			if err := c.Associate(context.Background()); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(2 * time.Second)
			for c.Counters().HeartbeatsAnswered < 3 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			k := c.Counters()
			if k.HeartbeatsAnswered < 3 || k.HeartbeatsLost != 0 || (k.UPFRestarts > 0) != tc.restarts {
				t.Errorf("heartbeats: %d answered, %d lost, %d restarts seen; want 3 answered, restarts %v",
					k.HeartbeatsAnswered, k.HeartbeatsLost, k.UPFRestarts, tc.restarts)
			}
		})
	}
}
