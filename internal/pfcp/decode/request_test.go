package decode

import (
	"net"
	"net/netip"
	"testing"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/session"
)

// payload is the IEs of m as they come off the wire.
func payload(t *testing.T, m message.Message) ([]byte, []*ie.IE) {
	t.Helper()
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	h, err := message.ParseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	ies, err := ie.ParseMultiIEs(h.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return h.Payload, ies
}

var (
	node     = ie.NewNodeID("198.18.4.1", "", "")
	smfFSEID = ie.NewFSEID(0x77, net.IPv4(198, 18, 4, 1), nil)
	uplinkTo = ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
		ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0d, 0, nil, nil, 5),
			ie.NewTGPPInterfaceType(ie.TGPPInterfaceTypeN33GPPAccess)),
		ie.NewFARID(1))
	toCore = ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02),
		ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore),
			ie.NewTGPPInterfaceType(ie.TGPPInterfaceTypeN6)))
)

// What the SMFs say of a session besides its rules is kept, for the
// operator to find it by.
func TestEstablishKeepsWhatTheSessionIs(t *testing.T) {
	m := message.NewSessionEstablishmentRequest(0, 0, 0, 1, 0, node, smfFSEID, uplinkTo, toCore,
		ie.NewPDNType(ie.PDNTypeIPv4v6), ie.NewUserID(0x03, "001010000000001", "437081612581615", "", ""),
		ie.NewAPNDNN("internet"), ie.NewSNSSAI(1, 0x010203))
	r, e := Establish(payload(t, m))
	if e != nil {
		t.Fatal(e)
	}
	want := session.Info{PDNType: 3, UserID: "imsi-001010000000001,imei-437081612581615", DNN: "internet", SNSSAI: "1-010203"}
	if r.Info != want {
		t.Errorf("info %+v\nwant %+v", r.Info, want)
	}
	if r.Peer != "198.18.4.1" || r.CPSEID != 0x77 || r.CPAddr != netip.MustParseAddr("198.18.4.1") {
		t.Errorf("peer %q, CP F-SEID %#x at %v", r.Peer, r.CPSEID, r.CPAddr)
	}
	if it := r.PDRs[0].PDI.InterfaceType; it == nil || *it != ie.TGPPInterfaceTypeN33GPPAccess {
		t.Errorf("PDR's source interface type %v", it)
	}
	if it := r.FARs[0].Forw.InterfaceType; it == nil || *it != ie.TGPPInterfaceTypeN6 {
		t.Errorf("FAR's destination interface type %v", it)
	}
	noSD := message.NewSessionEstablishmentRequest(0, 0, 0, 1, 0, node, smfFSEID, uplinkTo, toCore, ie.NewSNSSAI(1, 0xffffff))
	if r, _ := Establish(payload(t, noSD)); r.Info.SNSSAI != "1" {
		t.Errorf("S-NSSAI without an SD: %q, want 1", r.Info.SNSSAI)
	}
}

// A refusal is addressed by the Node ID and the CP F-SEID whatever comes
// before them; a Node ID that cannot name an association leaves none.
func TestEstablishRefusalKnowsItsPeer(t *testing.T) {
	for _, c := range []struct {
		name  string
		ies   []*ie.IE
		extra *ie.IE // after the others, where go-pfcp keeps one of a type
		peer  string
		ie    uint16
	}{
		{"a bad rule before the Node ID", []*ie.IE{ie.NewCreatePDR(ie.NewPDRID(1)), node, smfFSEID}, nil, "198.18.4.1", ie.Precedence},
		{"two Node IDs", []*ie.IE{node, smfFSEID, uplinkTo, toCore}, node, "", ie.NodeID},
		{"no Node ID", []*ie.IE{smfFSEID, uplinkTo, toCore}, nil, "", ie.NodeID},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := message.NewSessionEstablishmentRequest(0, 0, 0, 1, 0, c.ies...)
			if c.extra != nil {
				m.IEs = append(m.IEs, c.extra)
			}
			r, e := Establish(payload(t, m))
			if e == nil || e.IE != c.ie {
				t.Fatalf("refusal %v, want one naming IE %d", e, c.ie)
			}
			if r.Peer != c.peer || r.CPSEID != 0x77 {
				t.Errorf("peer %q, CP SEID %#x; want %q, 0x77", r.Peer, r.CPSEID, c.peer)
			}
		})
	}
}

// An SMF may change its F-SEID in a modification (free5GC sends it).
func TestModifyTakesANewCPFSEID(t *testing.T) {
	m := message.NewSessionModificationRequest(0, 0, 5, 1, 0, ie.NewFSEID(0x88, net.IPv4(198, 18, 4, 3), nil))
	b, ies := payload(t, m)
	r, e := Modify(5, b, ies)
	if e != nil {
		t.Fatal(e)
	}
	if r.CP == nil || *r.CP != (session.CPFSEID{SEID: 0x88, Addr: netip.MustParseAddr("198.18.4.3")}) {
		t.Errorf("CP F-SEID %+v", r.CP)
	}
}
