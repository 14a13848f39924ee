package e2e

import (
	"net"
	"testing"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// TestPrivilegedUPFDBidirectionalFlow: Open5GS (since 2.7.1) gives a
// flow's description in the downlink PDR, with BID and an SDF Filter ID,
// and only that ID in the uplink PDR. The uplink PDR matches the flow and
// nothing else: traffic outside it does not reach the data network (it
// did, when the ID alone was taken as a filter that matches everything).
func TestPrivilegedUPFDBidirectionalFlow(t *testing.T) {
	lab := testenv.NewLab(t)
	log, _ := testenv.StartUPFD(t, lab.UPF, config)
	s := newSMF(t, lab)
	s.associate(log)
	const flowID = 7
	ni := ie.NewNetworkInstance("internet")
	r := s.ask(message.NewSessionEstablishmentRequest(0, 0, 0, s.next(), 0,
		ie.NewNodeID("198.18.4.1", "", ""), ie.NewFSEID(0x2000, net.IPv4(198, 18, 4, 1), nil),
		ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(100),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0d, 0, nil, nil, 1), ni,
				ie.NewUEIPAddress(0x02, "10.45.0.20", "", 0, 0), ie.NewSDFFilter("", "", "", "", flowID)),
			ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1)),
		ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(100),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ni, ie.NewUEIPAddress(0x06, "10.45.0.20", "", 0, 0),
				ie.NewSDFFilter("permit out udp from 198.18.7.10 5001 to assigned", "", "", "", flowID)),
			ie.NewFARID(2)),
		ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), ni)),
		ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
				ie.NewOuterHeaderCreation(0x0100, 0x220, "198.18.3.1", "", 0, 0, 0))),
	)).(*message.SessionEstablishmentResponse)
	if c := cause(t, r.Cause); c != 1 {
		t.Fatalf("establishment: cause %d\n%s", c, log)
	}
	teid := createdTEID(t, r)
	gnb := testenv.ListenUDP(t, lab.GNB, "198.18.3.1:2152")
	inFlow := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5001")
	outside := testenv.ListenUDP(t, lab.DN, "198.18.7.10:53")
	const n = 20
	gotIn, gotOut := receiveAsync(inFlow, n), receiveAsync(outside, 1)
	for i := range n {
		sendUplinkTo(t, gnb, "10.45.0.20", 5001, teid, i)
		sendUplinkTo(t, gnb, "10.45.0.20", 53, teid, i)
	}
	if got := len(<-gotIn); got != n {
		t.Errorf("uplink in the flow: %d of %d reached the DN", got, n)
	}
	if got := len(<-gotOut); got != 0 {
		t.Errorf("uplink outside the flow (UDP/53): %d reached the DN, want none", got)
	}
}
