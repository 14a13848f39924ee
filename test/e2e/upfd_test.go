// Package e2e runs the real upfd in the lab's namespaces, drives it over N4
// as an SMF would and sends real traffic through it.
package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
)

const config = testenv.UPFDLab + `teid_range: 0x100-0xffff
max_sessions: 1024
xdp_mode: native
gtpu:
  echo_interval: 0   # the test's gNB sockets count what they get: no Echo Requests among it
`

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// smf is a PFCP client in the SMF namespace. A reader matches responses
// to requests and answers the UPF's own requests (Session Report, Node
// Report, Heartbeat), keeping them for the test.
type smf struct {
	t       *testing.T
	conn    *net.UDPConn
	upf     *net.UDPAddr
	seq     uint32
	answers chan message.Message
	reports chan message.Message // UPF-initiated requests, answered Accepted
}

// smfRecovery is when the test's SMF started, as it tells upfd.
var smfRecovery = time.Unix(1_750_000_000, 0)

func newSMF(t *testing.T, lab testenv.Lab) *smf {
	s := &smf{t: t, upf: &net.UDPAddr{IP: net.IPv4(198, 18, 4, 2), Port: 8805},
		answers: make(chan message.Message, 16), reports: make(chan message.Message, 1024)}
	s.conn = testenv.ListenUDP(t, lab.SMF, "198.18.4.1:8805")
	done := make(chan struct{})
	go s.read(done)
	t.Cleanup(func() { s.conn.Close(); <-done })
	return s
}

func (s *smf) read(done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 65535)
	for {
		n, from, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		m, err := message.Parse(bytes.Clone(buf[:n])) // the message keeps slices of what it parsed
		if err != nil {
			s.t.Errorf("a message from upfd does not decode: %v", err)
			continue
		}
		var resp message.Message
		switch r := m.(type) {
		case *message.SessionReportRequest:
			resp = message.NewSessionReportResponse(0, 0, 0x55, r.Sequence(), 0, ie.NewCause(1))
		case *message.HeartbeatRequest:
			// The same Recovery Time Stamp as in the association: a new one
			// would tell upfd the SMF restarted.
			resp = message.NewHeartbeatResponse(r.Sequence(), ie.NewRecoveryTimeStamp(smfRecovery))
		case *message.NodeReportRequest:
			resp = message.NewNodeReportResponse(r.Sequence(), ie.NewNodeID("198.18.4.1", "", ""), ie.NewCause(1), nil)
		default:
			s.answers <- m
			continue
		}
		b := make([]byte, resp.MarshalLen())
		resp.MarshalTo(b)
		s.conn.WriteToUDP(b, from)
		select {
		case s.reports <- m:
		default:
		}
	}
}

// ask sends a request (again every half second, as an SMF retransmits)
// until the answer with its sequence number comes, for at most 10 s.
func (s *smf) ask(m message.Message) message.Message {
	s.t.Helper()
	r := s.tryAsk(m, 10*time.Second, func() bool { return false })
	if r == nil {
		s.t.Fatalf("upfd did not answer %s", m.MessageTypeName())
	}
	return r
}

// tryAsk is ask for at most wait, or until gone says the UPF has gone:
// nil then.
func (s *smf) tryAsk(m message.Message, wait time.Duration, gone func() bool) message.Message {
	s.t.Helper()
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		s.t.Fatal(err)
	}
	for deadline := time.Now().Add(wait); time.Now().Before(deadline) && !gone(); {
		s.conn.WriteToUDP(b, s.upf)
		timeout := time.After(500 * time.Millisecond)
	wait:
		for {
			select {
			case r := <-s.answers:
				if r.Sequence() == m.Sequence() {
					return r
				}
			case <-timeout:
				break wait
			}
		}
	}
	return nil
}

// report waits up to d for the UPF's next Session Report Request for the
// session the SMF calls cp, passing over others.
func (s *smf) report(t *testing.T, cp uint64, d time.Duration) *message.SessionReportRequest {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case m := <-s.reports:
			if r, ok := m.(*message.SessionReportRequest); ok && r.SEID() == cp {
				return r
			}
		case <-timeout:
			t.Fatalf("no report for CP SEID %#x within %v", cp, d)
			return nil
		}
	}
}

// associate sets up the association, upfd's log in the failure.
func (s *smf) associate(log fmt.Stringer) {
	s.t.Helper()
	as := s.ask(message.NewAssociationSetupRequest(s.next(), ie.NewNodeID("198.18.4.1", "", ""),
		ie.NewRecoveryTimeStamp(smfRecovery))).(*message.AssociationSetupResponse)
	if c := cause(s.t, as.Cause); c != 1 {
		s.t.Fatalf("association: cause %d\n%s", c, log)
	}
}

func (s *smf) next() uint32 { s.seq++; return s.seq }

func cause(t *testing.T, c *ie.IE) uint8 {
	t.Helper()
	if c == nil {
		t.Fatal("no cause")
	}
	v, _ := c.Cause()
	return v
}

func TestPrivilegedUPFD(t *testing.T) {
	lab := testenv.NewLab(t)
	log, _ := testenv.StartUPFD(t, lab.UPF, config)
	s := newSMF(t, lab)

	s.associate(log)

	est := s.ask(establishment(s.next(), "10.45.0.2", volumeURR(1))).(*message.SessionEstablishmentResponse)
	if c := cause(t, est.Cause); c != 1 {
		t.Fatalf("establishment: cause %d\n%s", c, log)
	}
	up, _ := est.UPFSEID.FSEID()
	teid := createdTEID(t, est)

	gnb := testenv.ListenUDP(t, lab.GNB, "198.18.3.1:2152")
	gnb2 := testenv.ListenUDP(t, lab.GNB, "198.18.3.11:2152")
	dnRx := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5001")
	dnTx := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5002")
	const count = 500
	exchange(t, gnb, gnb, dnRx, dnTx, teid, 0x200, 0, count)

	// Handover: downlink now goes to the second gNB address, and the first
	// gets an End Marker for its tunnel (SNDEM).
	mod := s.ask(message.NewSessionModificationRequest(0, 0, up.SEID, s.next(), 0,
		ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
			ie.NewUpdateForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
				ie.NewOuterHeaderCreation(0x0100, 0x300, "198.18.3.11", "", 0, 0, 0),
				ie.NewPFCPSMReqFlags(0x02))))).(*message.SessionModificationResponse)
	if c := cause(t, mod.Cause); c != 1 {
		t.Fatalf("modification: cause %d\n%s", c, log)
	}
	gnb.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 2048)
	if n, _, err := gnb.ReadFromUDP(buf); err != nil || !bytes.Equal(buf[:n], []byte{0x30, 254, 0, 0, 0, 0, 2, 0}) {
		t.Errorf("old gNB: want an End Marker for TEID 0x200, got % x (%v)", buf[:n], err)
	}
	exchange(t, gnb, gnb2, dnRx, dnTx, teid, 0x300, count, count)

	del := s.ask(message.NewSessionDeletionRequest(0, 0, up.SEID, s.next(), 0)).(*message.SessionDeletionResponse)
	if c := cause(t, del.Cause); c != 1 {
		t.Fatalf("deletion: cause %d\n%s", c, log)
	}
	// The final report counts every inner IP packet, 128 bytes each way.
	want := volume{ul: 2 * count * 128, dl: 2 * count * 128, ulPkts: 2 * count, dlPkts: 2 * count}
	if got := usageIn(t, del.UsageReport, 1); got != want {
		t.Errorf("final usage %+v, want %+v", got, want)
	}
	// Gone: uplink no longer reaches the DN.
	sendUplink(t, gnb, teid, 2*count)
	dnRx.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, _, err := dnRx.ReadFromUDP(make([]byte, 2048)); err == nil {
		t.Errorf("uplink reached the DN after the session was deleted")
	}
}

// establishment asks for a session for a UE: uplink by a chosen F-TEID to
// the DN, downlink to the gNB at 198.18.3.1 in TEID 0x200 (FAR 2), QFI 9,
// with the given URR (ID 1) on both PDRs. The CP SEID is 0x1000+seq. fars replace FAR 2 if given.
func establishment(seq uint32, ue string, urr *ie.IE, fars ...*ie.IE) message.Message {
	node := ie.NewNodeID("198.18.4.1", "", "")
	if fars == nil {
		fars = []*ie.IE{ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
				ie.NewOuterHeaderCreation(0x0100, 0x200, "198.18.3.1", "", 0, 0, 0)))}
	}
	ies := []*ie.IE{node, ie.NewFSEID(0x1000+uint64(seq), net.IPv4(198, 18, 4, 1), nil),
		ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0d, 0, nil, nil, 1),
				ie.NewNetworkInstance("internet"), ie.NewUEIPAddress(0x02, ue, "", 0, 0)),
			ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1), ie.NewQERID(1), ie.NewURRID(1)),
		ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewNetworkInstance("internet"),
				ie.NewUEIPAddress(0x06, ue, "", 0, 0)),
			ie.NewFARID(2), ie.NewQERID(1), ie.NewURRID(1)),
		ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), ie.NewNetworkInstance("internet"))),
		ie.NewCreateQER(ie.NewQERID(1), ie.NewGateStatus(0, 0), ie.NewQFI(9)),
		urr,
	}
	return message.NewSessionEstablishmentRequest(0, 0, 0, seq, 0, append(ies, fars...)...)
}

// volumeURR measures volume and reports only when asked, unless extra
// holds Reporting Triggers of its own.
func volumeURR(id uint32, extra ...*ie.IE) *ie.IE {
	kids := []*ie.IE{ie.NewURRID(id), ie.NewMeasurementMethod(0, 1, 0)}
	if !slices.ContainsFunc(extra, func(i *ie.IE) bool { return i.Type == ie.ReportingTriggers }) {
		kids = append(kids, ie.NewReportingTriggers(0, 0, 0))
	}
	return ie.NewCreateURR(append(kids, extra...)...)
}

// volume is a Volume Measurement in octets and packets.
type volume struct{ ul, dl, ulPkts, dlPkts uint64 }

// usageIn finds the usage report of a URR and reads its volume, checking
// that totals are the sums.
func usageIn(t *testing.T, reports []*ie.IE, urr uint32) volume {
	t.Helper()
	for _, r := range reports {
		kids, err := r.ValueAsGrouped()
		if err != nil {
			t.Fatalf("usage report: %v", err)
		}
		var id uint32
		var v *ie.VolumeMeasurementFields
		for _, k := range kids {
			switch k.Type {
			case ie.URRID:
				id, _ = k.URRID()
			case ie.VolumeMeasurement:
				v, _ = k.VolumeMeasurement()
			}
		}
		if id != urr {
			continue
		}
		if v == nil {
			t.Fatalf("usage report of URR %d has no volume measurement", urr)
		}
		if v.TotalVolume != v.UplinkVolume+v.DownlinkVolume || v.TotalNumberOfPackets != v.UplinkNumberOfPackets+v.DownlinkNumberOfPackets {
			t.Errorf("usage report of URR %d: totals are not the sums: %+v", urr, v)
		}
		return volume{v.UplinkVolume, v.DownlinkVolume, v.UplinkNumberOfPackets, v.DownlinkNumberOfPackets}
	}
	t.Fatalf("no usage report of URR %d", urr)
	return volume{}
}

func createdTEID(t *testing.T, r *message.SessionEstablishmentResponse) uint32 {
	t.Helper()
	for _, c := range r.CreatedPDR {
		kids, _ := c.CreatedPDR()
		for _, k := range kids {
			if k.Type == ie.FTEID {
				f, _ := k.FTEID()
				return f.TEID
			}
		}
	}
	t.Fatal("no F-TEID in the Created PDRs")
	return 0
}

// exchange sends count numbered datagrams each way and checks they all
// arrive, downlink in the gNB tunnel dlTEID at gnbRx.
func exchange(t *testing.T, gnbTx, gnbRx, dnRx, dnTx *net.UDPConn, ulTEID, dlTEID uint32, first, count int) {
	t.Helper()
	got := receiveAsync(dnRx, count)
	for i := first; i < first+count; i++ {
		sendUplink(t, gnbTx, ulTEID, i)
	}
	if up := <-got; len(up) != count {
		t.Errorf("uplink: %d of %d datagrams reached the DN", len(up), count)
	}
	got = receiveAsync(gnbRx, count)
	ue := &net.UDPAddr{IP: net.IPv4(10, 45, 0, 2), Port: 40000}
	for i := first; i < first+count; i++ {
		msg := make([]byte, 100)
		binary.BigEndian.PutUint32(msg, uint32(i))
		dnTx.WriteToUDP(msg, ue)
		pace(i)
	}
	down := <-got
	if len(down) != count {
		t.Errorf("downlink: %d of %d G-PDUs reached the gNB", len(down), count)
	}
	for _, b := range down {
		if len(b) < 16 || binary.BigEndian.Uint32(b[4:]) != dlTEID || b[0] != 0x34 || b[14]&0x3f != 9 {
			t.Fatalf("downlink G-PDU %x: want TEID %#x and QFI 9", b[:min(len(b), 16)], dlTEID)
		}
	}
}

// sendUplink sends a G-PDU with a UDP datagram from the UE numbered i.
func sendUplink(t *testing.T, gnb *net.UDPConn, teid uint32, i int) {
	sendUplinkFrom(t, gnb, "10.45.0.2", teid, i)
}

// sendUplinkFrom sends a G-PDU with a UDP datagram from ue numbered i.
func sendUplinkFrom(t *testing.T, gnb *net.UDPConn, ue string, teid uint32, i int) {
	sendUplinkTo(t, gnb, ue, 5001, teid, i)
}

// sendUplinkTo sends a G-PDU with a UDP datagram from ue to the DN host's
// port, numbered i.
func sendUplinkTo(t *testing.T, gnb *net.UDPConn, ue string, port uint16, teid uint32, i int) {
	inner := udp4(netip.MustParseAddr(ue), netip.MustParseAddr("198.18.7.10"), 40000, port, uint32(i))
	g := []byte{0x34, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x85, 1, 0x10, 9, 0}
	binary.BigEndian.PutUint16(g[2:], uint16(len(g)-8+len(inner)))
	binary.BigEndian.PutUint32(g[4:], teid)
	if _, err := gnb.WriteToUDP(append(g, inner...), &net.UDPAddr{IP: net.IPv4(198, 18, 3, 2), Port: 2152}); err != nil {
		t.Fatal(err)
	}
	pace(i)
}

// udp4 is an IPv4/UDP packet with a 100-byte payload starting with n.
func udp4(src, dst netip.Addr, sport, dport uint16, n uint32) []byte {
	p := make([]byte, 28+100)
	p[0], p[8], p[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	copy(p[12:], src.AsSlice())
	copy(p[16:], dst.AsSlice())
	binary.BigEndian.PutUint16(p[10:], ^sum(p[:20]))
	binary.BigEndian.PutUint16(p[20:], sport)
	binary.BigEndian.PutUint16(p[22:], dport)
	binary.BigEndian.PutUint16(p[24:], uint16(len(p)-20))
	binary.BigEndian.PutUint32(p[28:], n) // UDP checksum left 0: optional over IPv4
	return p
}

func sum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

func receiveAsync(c *net.UDPConn, n int) <-chan [][]byte {
	ch := make(chan [][]byte, 1)
	go func() {
		var got [][]byte
		buf := make([]byte, 2048)
		for len(got) < n {
			c.SetReadDeadline(time.Now().Add(time.Second))
			k, _, err := c.ReadFromUDP(buf)
			if err != nil {
				break
			}
			got = append(got, bytes.Clone(buf[:k]))
		}
		ch <- got
	}()
	return ch
}

// pace keeps bursts within the veth rings: the test counts, it does not race.
func pace(i int) {
	if i%64 == 63 {
		time.Sleep(time.Millisecond)
	}
}
