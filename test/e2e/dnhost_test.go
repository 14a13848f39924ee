package e2e

import (
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// TestPrivilegedUPFDDataNetworkReachesNoSocket sends, from where an
// attacker would, what reached upfd before: from the data network, a
// GTP-U Error Indication naming a live tunnel (to the N3 and the N6
// address) and an Association Setup Request (to the N4 and the N6
// address); from a second network behind the SMF, an Association Setup
// Request with pfcp.peers left empty. None may have an effect, while the
// same messages from the gNB and the SMF do, and the data network still
// reaches the host's N6 address (ping).
func TestPrivilegedUPFDDataNetworkReachesNoSocket(t *testing.T) {
	lab := testenv.NewLab(t)
	noPeers := strings.Replace(config, "  peers: [198.18.4.1]\n", "", 1)
	if noPeers == config {
		t.Fatal("the lab's config no longer lists pfcp.peers as this test expects")
	}
	log, _ := testenv.StartUPFD(t, lab.UPF, noPeers)
	s := newSMF(t, lab)
	s.associate(log)
	est := s.ask(establishment(s.next(), "10.45.0.2", volumeURR(1))).(*message.SessionEstablishmentResponse)
	if c := cause(t, est.Cause); c != 1 {
		t.Fatalf("establishment: cause %d\n%s", c, log)
	}
	cp := uint64(0x1000 + s.seq)

	// The data network's host routes to every address of the UPF.
	for _, upf := range []string{"198.18.3.0/24", "198.18.4.0/24"} {
		testenv.Sh(t, "ip", "-n", lab.DN, "route", "add", upf, "via", "198.18.6.2")
	}
	dn := testenv.ListenUDP(t, lab.DN, "198.18.7.10:2152")
	// The gNB has no tunnel 0x200 (the session's downlink): TEID Data I and
	// the GTP-U Peer Address 198.18.3.1.
	ind := []byte{0x32, 26, 0, 16, 0, 0, 0, 0, 0, 7, 0, 0, 16, 0, 0, 2, 0, 133, 0, 4, 198, 18, 3, 1}
	setup := marshal(t, message.NewAssociationSetupRequest(1, ie.NewNodeID("198.18.7.10", "", ""),
		ie.NewRecoveryTimeStamp(time.Now())))
	for _, to := range []struct {
		addr string
		msg  []byte
	}{
		{"198.18.3.2:2152", ind}, {"198.18.6.2:2152", ind},
		{"198.18.4.2:8805", setup}, {"198.18.6.2:8805", setup},
	} {
		if _, err := dn.WriteToUDP(to.msg, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(to.addr))); err != nil {
			t.Fatal(err)
		}
	}
	dn.SetReadDeadline(time.Now().Add(time.Second))
	if n, from, err := dn.ReadFromUDP(make([]byte, 2048)); err == nil {
		t.Errorf("the data network got %d bytes from %v", n, from)
	}
	select {
	case m := <-s.reports:
		t.Errorf("upfd sent the SMF %s after the data network's Error Indication", m.MessageTypeName())
	case <-time.After(time.Second):
	}
	if strings.Contains(log.String(), "198.18.7.10") {
		t.Errorf("upfd heard from the data network:\n%s", log)
	}

	// The same Error Indication from the gNB is reported (ERIR).
	gnb := testenv.ListenUDP(t, lab.GNB, "198.18.3.1:2152")
	if _, err := gnb.WriteToUDP(ind, &net.UDPAddr{IP: net.IPv4(198, 18, 3, 2), Port: 2152}); err != nil {
		t.Fatal(err)
	}
	if typ, _ := s.report(t, cp, 2*time.Second).ReportType.ReportType(); typ != 0x04 {
		t.Errorf("report type %#x, want ERIR", typ)
	}

	// The host still answers on N6 at its own address.
	if out, err := exec.Command("ip", "netns", "exec", lab.DN, "ping", "-c", "2", "-W", "2", "198.18.6.2").CombinedOutput(); err != nil {
		t.Errorf("ping from the data network to the N6 address: %v\n%s", err, out)
	}

	// An SMF beyond N4's own network is refused while pfcp.peers is empty.
	testenv.Sh(t, "ip", "-n", lab.SMF, "addr", "add", "198.18.5.1/32", "dev", "smf0")
	testenv.Sh(t, "ip", "-n", lab.UPF, "route", "add", "198.18.5.0/24", "via", "198.18.4.1")
	far := testenv.ListenUDP(t, lab.SMF, "198.18.5.1:8805")
	if _, err := far.WriteToUDP(setup, &net.UDPAddr{IP: net.IPv4(198, 18, 4, 2), Port: 8805}); err != nil {
		t.Fatal(err)
	}
	far.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 2048)
	n, _, err := far.ReadFromUDP(buf)
	if err != nil {
		t.Fatalf("no answer to the SMF beyond N4's network: %v", err)
	}
	m, err := message.Parse(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := m.(*message.AssociationSetupResponse); !ok || cause(t, r.Cause) != ie.CauseRequestRejected {
		t.Errorf("answer to the SMF beyond N4's network: %v, want Association Setup Response, Request rejected", m)
	}
}

func marshal(t *testing.T, m message.Message) []byte {
	t.Helper()
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	return b
}
