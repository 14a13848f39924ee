package smf

// A UPF that answers as a test tells it, in a namespace of our own, for
// what upfd never does: drop requests, answer late or wrongly, ask first.

import (
	"bytes"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/topo"
)

// fakeUPF answers each request with what answer returns for it (nil: no
// answer); copy counts the datagrams with its sequence number, from 1.
type fakeUPF struct {
	conn    *net.UDPConn
	answer  func(req message.Message, copy int) message.Message
	answers chan message.Message // the client's answers to our requests

	mu     sync.Mutex
	copies map[uint32]int
	wires  map[uint32][][]byte // what came, by sequence number
}

// newFakeUPF puts the SMF's and the UPF's N4 addresses on the loopback of
// a namespace of its own and serves there until the test ends. It returns
// a client config for that namespace with quick timers.
func newFakeUPF(t *testing.T, answer func(message.Message, int) message.Message) (*fakeUPF, Config) {
	t.Helper()
	ns := testenv.Namespace(t, "sluice-smf")
	testenv.Sh(t, "ip", "-n", ns, "link", "set", "lo", "up")
	for _, a := range []netip.Addr{topo.SMFN4, topo.UPFN4} {
		testenv.Sh(t, "ip", "-n", ns, "addr", "add", a.String()+"/32", "dev", "lo")
	}
	f := &fakeUPF{answer: answer, answers: make(chan message.Message, 16),
		copies: map[uint32]int{}, wires: map[uint32][][]byte{}}
	f.conn = testenv.ListenUDP(t, ns, netip.AddrPortFrom(topo.UPFN4, PFCPPort).String())
	done := make(chan struct{})
	go f.serve(t, done)
	t.Cleanup(func() { f.conn.Close(); <-done })
	return f, Config{Namespace: ns, T1: 250 * time.Millisecond, N1: 3} // T1 long enough for a loaded CI machine to answer in
}

func (f *fakeUPF) serve(t *testing.T, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 65535)
	for {
		n, from, err := f.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		wire := bytes.Clone(buf[:n])
		m, err := message.Parse(wire)
		if err != nil {
			t.Errorf("fake UPF: undecodable datagram: %v", err)
			continue
		}
		if isAnswer(m) {
			f.answers <- m
			continue
		}
		f.mu.Lock()
		f.copies[m.Sequence()]++
		f.wires[m.Sequence()] = append(f.wires[m.Sequence()], wire)
		nth := f.copies[m.Sequence()]
		f.mu.Unlock()
		if r := f.answer(m, nth); r != nil {
			f.send(t, r, from)
		}
	}
}

func isAnswer(m message.Message) bool {
	switch m.(type) {
	case *message.HeartbeatResponse, *message.SessionReportResponse, *message.NodeReportResponse:
		return true
	}
	return false
}

func (f *fakeUPF) send(t *testing.T, m message.Message, to netip.AddrPort) {
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		t.Errorf("fake UPF: encode %s: %v", m.MessageTypeName(), err)
		return
	}
	f.conn.WriteToUDPAddrPort(b, to)
}

// ask sends the client a request and returns its answer.
func (f *fakeUPF) ask(t *testing.T, m message.Message) message.Message {
	t.Helper()
	f.send(t, m, netip.AddrPortFrom(topo.SMFN4, PFCPPort))
	select {
	case r := <-f.answers:
		return r
	case <-time.After(2 * time.Second):
		t.Fatalf("the client did not answer a %s", m.MessageTypeName())
		return nil
	}
}

// sent is every copy of request seq that came.
func (f *fakeUPF) sent(seq uint32) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wires[seq]
}

// fakeRecovery is when the fake UPF started, as it says.
var fakeRecovery = time.Unix(1_700_000_000, 0)

// accept answers every request Request accepted: the UP SEID is the CP
// SEID + 0x1000, a chosen F-TEID is TEID CP SEID + 0x100 at 198.18.3.2.
func accept(req message.Message, _ int) message.Message {
	ok := ie.NewCause(ie.CauseRequestAccepted)
	switch r := req.(type) {
	case *message.AssociationSetupRequest:
		return message.NewAssociationSetupResponse(r.Sequence(), ie.NewNodeID(topo.UPFN4.String(), "", ""), ok,
			ie.NewRecoveryTimeStamp(fakeRecovery), ie.NewUPFunctionFeatures(0x10, 0))
	case *message.HeartbeatRequest:
		return message.NewHeartbeatResponse(r.Sequence(), ie.NewRecoveryTimeStamp(fakeRecovery))
	case *message.SessionEstablishmentRequest:
		cp, _ := r.CPFSEID.FSEID()
		return message.NewSessionEstablishmentResponse(0, 0, cp.SEID, r.Sequence(), 0, ok,
			ie.NewFSEID(cp.SEID+0x1000, topo.UPFN4.AsSlice(), nil),
			ie.NewCreatedPDR(ie.NewPDRID(plainUplinkPDR), ie.NewFTEID(fteidV4, uint32(cp.SEID)+0x100, topo.UPFN3.AsSlice(), nil, 0)))
	case *message.SessionModificationRequest:
		return message.NewSessionModificationResponse(0, 0, r.SEID()-0x1000, r.Sequence(), 0, ok)
	case *message.SessionDeletionRequest:
		return message.NewSessionDeletionResponse(0, 0, r.SEID()-0x1000, r.Sequence(), 0, ok)
	}
	return nil
}

// dialFake dials a client to the fake UPF, closed when the test ends.
func dialFake(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := Dial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
