package e2e

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// TestPrivilegedUPFDReports drives the reports and the rules that change
// what flows: a volume quota, a periodic report, a gate closed and
// reopened, and downlink buffering with its report and flush. Each step
// has its own UE; one upfd serves them all.
func TestPrivilegedUPFDReports(t *testing.T) {
	lab := testenv.NewLab(t)
	log, _ := testenv.StartUPFD(t, lab.UPF, config)
	s := newSMF(t, lab)
	s.associate(log)
	gnb := testenv.ListenUDP(t, lab.GNB, "198.18.3.1:2152")
	dnRx := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5001")
	dnTx := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5002")
	// establish returns our SEID, the uplink TEID, and the SMF's SEID,
	// which our reports carry.
	establish := func(t *testing.T, ue string, urr *ie.IE, fars ...*ie.IE) (seid uint64, teid uint32, cp uint64) {
		t.Helper()
		seq := s.next()
		r := s.ask(establishment(seq, ue, urr, fars...)).(*message.SessionEstablishmentResponse)
		if c := cause(t, r.Cause); c != 1 {
			t.Fatalf("establishment of %s: cause %d\n%s", ue, c, log)
		}
		f, _ := r.UPFSEID.FSEID()
		return f.SEID, createdTEID(t, r), 0x1000 + uint64(seq)
	}
	modify := func(t *testing.T, seid uint64, ies ...*ie.IE) {
		t.Helper()
		r := s.ask(message.NewSessionModificationRequest(0, 0, seid, s.next(), 0, ies...)).(*message.SessionModificationResponse)
		if c := cause(t, r.Cause); c != 1 {
			t.Fatalf("modification: cause %d\n%s", c, log)
		}
	}

	t.Run("volume quota", func(t *testing.T) {
		// A hundred of the test's packets; the trigger is VOLQU.
		const quota = 100 * 128
		_, teid, cp := establish(t, "10.45.0.3", volumeURR(1, ie.NewReportingTriggers(0, 0x01, 0),
			ie.NewVolumeQuota(0x01, quota, 0, 0)))
		got := receiveAsync(dnRx, 150)
		for i := range 150 {
			sendUplinkFrom(t, gnb, "10.45.0.3", teid, i)
		}
		if n := len(<-got); n != 100 {
			t.Errorf("%d datagrams reached the DN, want the quota's 100", n)
		}
		r := s.report(t, cp, 3*time.Second)
		wantTrigger(t, r.UsageReport, []byte{0, 0x01, 0}) // VOLQU
		if got, want := usageIn(t, r.UsageReport, 1), (volume{ul: quota, ulPkts: 100}); got != want {
			t.Errorf("quota report %+v, want %+v", got, want)
		}
	})

	t.Run("time quota", func(t *testing.T) {
		seid, teid, cp := establish(t, "10.45.0.8", volumeURR(1, ie.NewReportingTriggers(0, 0x02, 0), // TIMQU
			ie.NewTimeQuota(time.Second)))
		uplink := func(first int) int {
			got := receiveAsync(dnRx, 10)
			for i := first; i < first+10; i++ {
				sendUplinkFrom(t, gnb, "10.45.0.8", teid, i)
			}
			return len(<-got)
		}
		if n := uplink(0); n != 10 {
			t.Fatalf("within the quota: %d of 10 datagrams reached the DN", n)
		}
		r := s.report(t, cp, 3*time.Second)
		wantTrigger(t, r.UsageReport, []byte{0, 0x02, 0})
		if n := uplink(10); n != 0 {
			t.Errorf("quota spent: %d datagrams reached the DN", n)
		}
		modify(t, seid, ie.NewUpdateURR(ie.NewURRID(1), ie.NewTimeQuota(time.Minute)))
		if n := uplink(20); n != 10 {
			t.Errorf("a new quota: %d of 10 datagrams reached the DN", n)
		}
	})

	t.Run("start of traffic, then quota holding time", func(t *testing.T) {
		// START (free5GC's online charging waits for it), QUHTI after 2 s
		// without a packet.
		_, teid, cp := establish(t, "10.45.0.10", volumeURR(1, ie.NewReportingTriggers(0x18, 0, 0),
			ie.NewQuotaHoldingTime(2*time.Second)))
		got := receiveAsync(dnRx, 3)
		for i := range 3 {
			sendUplinkFrom(t, gnb, "10.45.0.10", teid, i)
		}
		<-got
		r := s.report(t, cp, 3*time.Second)
		wantTrigger(t, r.UsageReport, []byte{0x10, 0, 0}) // START
		if got, want := usageIn(t, r.UsageReport, 1), (volume{ul: 3 * 128, ulPkts: 3}); got != want {
			t.Errorf("start report %+v, want %+v", got, want)
		}
		r = s.report(t, cp, 4*time.Second)
		wantTrigger(t, r.UsageReport, []byte{0x08, 0, 0}) // QUHTI
	})

	t.Run("a trigger the UPF does not act on is refused", func(t *testing.T) {
		r := s.ask(establishment(s.next(), "10.45.0.11", volumeURR(1, ie.NewReportingTriggers(0x20, 0, 0)))) // STOPT
		est := r.(*message.SessionEstablishmentResponse)
		if c := cause(t, est.Cause); c != 73 {
			t.Fatalf("STOPT: cause %d, want 73 (Rule creation/modification failure)", c)
		}
		if off, _ := est.OffendingIE.OffendingIE(); off != ie.ReportingTriggers {
			t.Errorf("STOPT: offending IE %d, want Reporting Triggers", off)
		}
	})

	t.Run("periodic report", func(t *testing.T) {
		_, _, cp := establish(t, "10.45.0.4", volumeURR(1, ie.NewReportingTriggers(0x01, 0, 0), // PERIO
			ie.NewMeasurementPeriod(time.Second)))
		r := s.report(t, cp, 3*time.Second)
		wantTrigger(t, r.UsageReport, []byte{0x01, 0, 0})
	})

	t.Run("gate closed and reopened", func(t *testing.T) {
		seid, _, _ := establish(t, "10.45.0.5", volumeURR(1))
		modify(t, seid, ie.NewUpdateQER(ie.NewQERID(1), ie.NewGateStatus(0, 1)))
		if n := downlink(t, dnTx, gnb, "10.45.0.5", 0, 20); n != 0 {
			t.Errorf("gate closed: %d G-PDUs reached the gNB", n)
		}
		modify(t, seid, ie.NewUpdateQER(ie.NewQERID(1), ie.NewGateStatus(0, 0)))
		if n := downlink(t, dnTx, gnb, "10.45.0.5", 20, 20); n != 20 {
			t.Errorf("gate reopened: %d of 20 G-PDUs reached the gNB", n)
		}
	})

	t.Run("error indication", func(t *testing.T) {
		// Its own downlink TEID, 0x207: the other sessions use 0x200.
		_, _, cp := establish(t, "10.45.0.7", volumeURR(1), ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
				ie.NewOuterHeaderCreation(0x0100, 0x207, "198.18.3.1", "", 0, 0, 0))))
		errorIndications(t, s, gnb, cp)
	})

	t.Run("buffer dropped (DROBU)", func(t *testing.T) {
		seid, _, cp := establish(t, "10.45.0.9", volumeURR(1),
			ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x0c), ie.NewBARID(1)), // BUFF|NOCP
			ie.NewCreateBAR(ie.NewBARID(1)))
		if n := downlink(t, dnTx, gnb, "10.45.0.9", 0, 10); n != 0 {
			t.Fatalf("%d G-PDUs reached the gNB while buffering", n)
		}
		s.report(t, cp, 2*time.Second) // the downlink data report
		got := receiveAsync(gnb, 1)
		modify(t, seid, ie.NewPFCPSMReqFlags(0x01), // DROBU
			ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
				ie.NewUpdateForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
					ie.NewOuterHeaderCreation(0x0100, 0x209, "198.18.3.1", "", 0, 0, 0))))
		if n := len(<-got); n != 0 {
			t.Errorf("%d buffered G-PDUs reached the gNB after DROBU", n)
		}
	})

	t.Run("buffering and flush", func(t *testing.T) {
		const held = 50
		seid, _, cp := establish(t, "10.45.0.6", volumeURR(1),
			ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x0c), ie.NewBARID(1)), // BUFF|NOCP
			ie.NewCreateBAR(ie.NewBARID(1), ie.NewSuggestedBufferingPacketsCount(100)))
		if n := downlink(t, dnTx, gnb, "10.45.0.6", 0, held); n != 0 {
			t.Fatalf("%d G-PDUs reached the gNB while buffering", n)
		}
		r := s.report(t, cp, 2*time.Second)
		if typ, _ := r.ReportType.ReportType(); typ != 0x01 { // DLDR
			t.Fatalf("report type %#x, want DLDR: %v\n%s", typ, r, log)
		}
		if kids, err := r.DownlinkDataReport.DownlinkDataReport(); err != nil || kids[0].Type != ie.PDRID {
			t.Errorf("downlink data report without the PDR ID: %v", err)
		}
		got := receiveAsync(gnb, held)
		modify(t, seid, ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
			ie.NewUpdateForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
				ie.NewOuterHeaderCreation(0x0100, 0x200, "198.18.3.1", "", 0, 0, 0))))
		flushed := <-got
		if len(flushed) != held {
			t.Fatalf("flush: %d of %d buffered G-PDUs reached the gNB", len(flushed), held)
		}
		for i, b := range flushed {
			// G-PDU (16 bytes with the PDU Session Container), IPv4, UDP, then the number.
			if n := binary.BigEndian.Uint32(b[16+28:]); n != uint32(i) {
				t.Fatalf("flush: G-PDU %d carries datagram %d: out of order", i, n)
			}
		}
		for {
			select {
			case m := <-s.reports:
				if m.SEID() == cp {
					t.Errorf("a second report for the buffering session: %s", m.MessageTypeName())
				}
				continue
			default:
			}
			break
		}
	})
}

// errorIndications: the UPF tells a gNB it has no tunnel for an unknown
// TEID, and reports to the SMF a gNB's Error Indication for a session's
// downlink tunnel.
func errorIndications(t *testing.T, s *smf, gnb *net.UDPConn, cp uint64) {
	sendUplinkFrom(t, gnb, "10.45.0.7", 0xdead, 0)
	buf := make([]byte, 2048)
	gnb.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, _, err := gnb.ReadFromUDP(buf)
	// S set, type 26, length 16, TEID 0, sequence, TEID Data I 0xdead, GTP-U Peer Address 198.18.3.2.
	want := []byte{0x32, 26, 0, 16, 0, 0, 0, 0, 0, 1, 0, 0, 16, 0, 0, 0xde, 0xad, 133, 0, 4, 198, 18, 3, 2}
	if err != nil || n != len(want) || !bytes.Equal(buf[:8], want[:8]) || !bytes.Equal(buf[10:n], want[10:]) {
		t.Errorf("unknown TEID: want an Error Indication % x, got % x (%v)", want, buf[:n], err)
	}
	// The gNB has no tunnel 0x207 (the session's downlink).
	ind := []byte{0x32, 26, 0, 16, 0, 0, 0, 0, 0, 7, 0, 0, 16, 0, 0, 2, 7, 133, 0, 4, 198, 18, 3, 1}
	if _, err := gnb.WriteToUDP(ind, &net.UDPAddr{IP: net.IPv4(198, 18, 3, 2), Port: 2152}); err != nil {
		t.Fatal(err)
	}
	r := s.report(t, cp, 2*time.Second)
	if typ, _ := r.ReportType.ReportType(); typ != 0x04 { // ERIR
		t.Fatalf("report type %#x, want ERIR", typ)
	}
	kids, err := r.ErrorIndicationReport.ErrorIndicationReport()
	if err != nil || len(kids) != 1 {
		t.Fatalf("error indication report: %v", err)
	}
	if f, err := kids[0].FTEID(); err != nil || f.TEID != 0x207 || !f.IPv4Address.Equal(net.IPv4(198, 18, 3, 1)) {
		t.Errorf("remote F-TEID %+v (%v), want 0x207 at 198.18.3.1", f, err)
	}
}

// downlink sends count numbered datagrams from the DN to a UE and says how
// many G-PDUs reached the gNB.
func downlink(t *testing.T, dnTx, gnb *net.UDPConn, ue string, first, count int) int {
	t.Helper()
	got := receiveAsync(gnb, count)
	to := &net.UDPAddr{IP: net.ParseIP(ue), Port: 40000}
	for i := first; i < first+count; i++ {
		msg := make([]byte, 100)
		binary.BigEndian.PutUint32(msg, uint32(i))
		dnTx.WriteToUDP(msg, to)
		pace(i)
	}
	return len(<-got)
}

// wantTrigger checks every usage report's trigger octets.
func wantTrigger(t *testing.T, reports []*ie.IE, want []byte) {
	t.Helper()
	if len(reports) == 0 {
		t.Fatal("no usage report")
	}
	for _, r := range reports {
		kids, _ := r.ValueAsGrouped()
		for _, k := range kids {
			if k.Type == ie.UsageReportTrigger {
				if got, _ := k.UsageReportTrigger(); string(got) != string(want) {
					t.Errorf("usage report trigger % x, want % x", got, want)
				}
			}
		}
	}
}

// TestPrivilegedUPFDFinalReportsOnShutdown: sessions end with an unpinned
// upfd, so on SIGTERM each URR's usage goes to its SMF, exact.
func TestPrivilegedUPFDFinalReportsOnShutdown(t *testing.T) {
	lab := testenv.NewLab(t)
	log, stop := testenv.StartUPFD(t, lab.UPF, config)
	s := newSMF(t, lab)
	s.associate(log)
	seq := s.next()
	est := s.ask(establishment(seq, "10.45.0.2", volumeURR(1))).(*message.SessionEstablishmentResponse)
	if c := cause(t, est.Cause); c != 1 {
		t.Fatalf("establishment: cause %d\n%s", c, log)
	}
	gnb := testenv.ListenUDP(t, lab.GNB, "198.18.3.1:2152")
	dnRx := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5001")
	got := receiveAsync(dnRx, 50)
	teid := createdTEID(t, est)
	for i := range 50 {
		sendUplink(t, gnb, teid, i)
	}
	if n := len(<-got); n != 50 {
		t.Fatalf("%d of 50 datagrams reached the DN", n)
	}
	stop()
	r := s.report(t, 0x1000+uint64(seq), 2*time.Second)
	wantTrigger(t, r.UsageReport, []byte{0, 0x08, 0}) // TERMR
	if got, want := usageIn(t, r.UsageReport, 1), (volume{ul: 50 * 128, ulPkts: 50}); got != want {
		t.Errorf("final usage on shutdown %+v, want %+v", got, want)
	}
}
