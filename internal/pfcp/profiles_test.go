package pfcp

// SMF profiles: the N4 flows that the Open5GS, free5GC and OAI-CN5G SMFs
// send, one test each, against the real server and datapath. Every request
// is written here with go-pfcp from what the SMF's source builds; the
// comment above each step names the file it was learnt from. A step the
// server refuses although the SMF really sends it is a bug: it is written
// for the right answer in its own subtest and skipped as "known".
//
// None of the three asks the UPF to choose the UE address: each gives its
// own, so no Created PDR may carry one.
//
// Sources (public repositories, read for the IEs they send):
//   Open5GS   open5gs/open5gs  src/smf/npcf-handler.c, src/smf/context.c,
//             src/smf/n4-build.c, src/smf/binding.c, lib/pfcp/build.c,
//             lib/pfcp/context.h, lib/pfcp/message.c
//   free5GC   free5gc/smf  internal/pfcp/message/build_establishment.go,
//             build_modification.go, build.go (v3), internal/context/
//             datapath.go, pcc_rule.go, internal/sbi/processor (AN release)
//   OAI       openairinterface/oai-cn5g-smf  src/smf_app/smf_procedure.cpp,
//             smf_n4.cpp, smf_qos_upf_edge.cpp

import (
	"net"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/session"
)

var (
	profileSMF = net.IPv4(198, 18, 4, 1)
	servingGNB = "198.18.3.1" // the serving gNB
	targetGNB  = "198.18.3.9" // the gNB a handover moves to
)

// 3GPP Interface Type values (TS 29.244 §8.2.118) the SMFs put beside the
// source and destination interfaces.
const (
	ifTypeN3           = 11
	ifTypeN6           = 17
	ifTypeDLForwarding = 10 // SGW/UPF GTP-U interface for DL data forwarding
)

// Reporting Triggers, octet 5 (§8.2.41).
const (
	trigPeriodic = 0x01
	trigVolume   = 0x02
	trigTime     = 0x04
)

// smfSession is one PFCP session as an SMF drives it.
type smfSession struct {
	t  *testing.T
	n  *n4
	cp uint64 // the SMF's SEID, sent in the CP F-SEID
	up uint64 // ours, from the UP F-SEID
}

// profileAssociate sets up the association as an SMF does and checks what
// all three rely on in the answer: our Node ID and Recovery Time Stamp, and
// FTUP, without which Open5GS and OAI do not ask us to choose F-TEIDs.
func profileAssociate(t *testing.T, n *n4, ies ...*ie.IE) {
	t.Helper()
	r, ok := n.ask(message.NewAssociationSetupRequest(n.next(), ies...)).(*message.AssociationSetupResponse)
	if !ok {
		t.Fatal("association setup: not answered with an Association Setup Response")
	}
	if c := causeIn(r); c != session.CauseAccepted {
		t.Fatalf("association setup: cause %d", c)
	}
	if id, err := r.NodeID.NodeID(); err != nil || id != "198.18.4.2" {
		t.Errorf("association setup: node ID %q (%v)", id, err)
	}
	if r.RecoveryTimeStamp == nil {
		t.Errorf("association setup: no Recovery Time Stamp")
	}
	if f := r.UPFunctionFeatures; f == nil || len(f.Payload) < 1 || f.Payload[0]&0x10 == 0 {
		t.Errorf("association setup: UP function features %v without FTUP", f)
	}
}

// ask sends m and returns its answer, passing over requests the server may
// send the SMF meanwhile (a usage report on a time threshold).
func (s *smfSession) ask(m message.Message) message.Message {
	s.t.Helper()
	if _, err := s.n.smf.WriteToUDP(encode(s.t, m), s.n.upf); err != nil {
		s.t.Fatal(err)
	}
	buf := make([]byte, 65535)
	s.n.smf.SetReadDeadline(time.Now().Add(2 * time.Second))
	for {
		k, _, err := s.n.smf.ReadFromUDP(buf)
		if err != nil {
			s.t.Fatalf("no answer to a %s: %v", m.MessageTypeName(), err)
		}
		r, err := message.Parse(buf[:k])
		if err != nil {
			s.t.Fatalf("answer to a %s does not decode: %v", m.MessageTypeName(), err)
		}
		if r.MessageType() == m.MessageType()+1 && r.Sequence() == m.Sequence() {
			return r
		}
	}
}

// establish sends the request with the SMF's Node ID and CP F-SEID in front
// of ies, checks the answer is addressed to the SMF's SEID and carries our
// F-SEID, and returns what the Created PDRs say we chose. All three SMFs
// give the UE address themselves: no Created PDR may carry one.
func (s *smfSession) establish(ies ...*ie.IE) map[uint16]chosen {
	s.t.Helper()
	all := append([]*ie.IE{smfNode, ie.NewFSEID(s.cp, profileSMF, nil)}, ies...)
	m := s.ask(message.NewSessionEstablishmentRequest(0, 0, 0, s.n.next(), 0, all...))
	r, ok := m.(*message.SessionEstablishmentResponse)
	if !ok {
		s.t.Fatalf("establishment: answered with %T", m)
	}
	if c := causeIn(r); c != session.CauseAccepted {
		s.t.Fatalf("establishment: cause %d, offending IE %d", c, offendingIn(r))
	}
	if r.Header.SEID != s.cp {
		s.t.Errorf("establishment: response SEID %#x, want the SMF's %#x", r.Header.SEID, s.cp)
	}
	if r.UPFSEID == nil {
		s.t.Fatal("establishment: no UP F-SEID")
	}
	f, err := r.UPFSEID.FSEID()
	if err != nil || f.SEID == 0 || f.IPv4Address == nil {
		s.t.Fatalf("establishment: UP F-SEID %+v (%v)", f, err)
	}
	s.up = f.SEID
	c := createdIn(s.t, r.CreatedPDR)
	for id, got := range c {
		if got.ueip != nil {
			s.t.Errorf("establishment: Created PDR %d has UE address %+v, which the SMF gave", id, got.ueip)
		}
	}
	return c
}

// modify sends a Session Modification Request to our SEID and checks it is
// accepted and answered to the SMF's SEID.
func (s *smfSession) modify(step string, ies ...*ie.IE) *message.SessionModificationResponse {
	s.t.Helper()
	m := s.ask(message.NewSessionModificationRequest(0, 0, s.up, s.n.next(), 0, ies...))
	r, ok := m.(*message.SessionModificationResponse)
	if !ok {
		s.t.Fatalf("%s: answered with %T", step, m)
	}
	if c := causeIn(r); c != session.CauseAccepted {
		s.t.Fatalf("%s: cause %d, offending IE %d", step, c, offendingIn(r))
	}
	if r.Header.SEID != s.cp {
		s.t.Errorf("%s: response SEID %#x, want the SMF's %#x", step, r.Header.SEID, s.cp)
	}
	return r
}

// release deletes the session and returns the URR IDs reported in the
// answer.
func (s *smfSession) release() []uint32 {
	s.t.Helper()
	m := s.ask(message.NewSessionDeletionRequest(0, 0, s.up, s.n.next(), 0))
	r, ok := m.(*message.SessionDeletionResponse)
	if !ok {
		s.t.Fatalf("deletion: answered with %T", m)
	}
	if c := causeIn(r); c != session.CauseAccepted {
		s.t.Fatalf("deletion: cause %d", c)
	}
	if r.Header.SEID != s.cp {
		s.t.Errorf("deletion: response SEID %#x, want the SMF's %#x", r.Header.SEID, s.cp)
	}
	return reportedURRs(s.t, r.UsageReport)
}

// chosen is what a Created PDR IE says the UPF chose.
type chosen struct {
	fteid *ie.FTEIDFields
	ueip  *ie.UEIPAddressFields
}

func createdIn(t *testing.T, ies []*ie.IE) map[uint16]chosen {
	t.Helper()
	out := map[uint16]chosen{}
	for _, c := range ies {
		kids, err := c.ValueAsGrouped()
		if err != nil {
			t.Fatalf("Created PDR does not decode: %v", err)
		}
		var id uint16
		var got chosen
		for _, k := range kids {
			switch k.Type {
			case ie.PDRID:
				id, err = k.PDRID()
			case ie.FTEID:
				got.fteid, err = k.FTEID()
			case ie.UEIPAddress:
				got.ueip, err = k.UEIPAddress()
			}
			if err != nil {
				t.Fatalf("Created PDR: IE %d does not decode: %v", k.Type, err)
			}
		}
		out[id] = got
	}
	return out
}

// chosenTEID is the F-TEID we chose for PDR id: an IPv4 N3 address, as the
// SMF passes it on to the gNB.
func chosenTEID(t *testing.T, c map[uint16]chosen, id uint16) uint32 {
	t.Helper()
	f := c[id].fteid
	if f == nil {
		t.Fatalf("no Created PDR with an F-TEID for PDR %d (have %d Created PDRs)", id, len(c))
	}
	if f.Flags&0x01 == 0 || !f.IPv4Address.Equal(n3.AsSlice()) || f.TEID == 0 {
		t.Errorf("PDR %d: created F-TEID %+v, want a TEID at %v", id, f, n3)
	}
	return f.TEID
}

func reportedURRs(t *testing.T, reports []*ie.IE) []uint32 {
	t.Helper()
	var ids []uint32
	for _, u := range reports {
		kids, err := u.ValueAsGrouped()
		if err != nil {
			t.Fatalf("Usage Report does not decode: %v", err)
		}
		for _, k := range kids {
			if k.Type == ie.URRID {
				id, _ := k.URRID()
				ids = append(ids, id)
			}
		}
	}
	return ids
}

func wantURRs(t *testing.T, step string, got []uint32, want ...uint32) {
	t.Helper()
	have := map[uint32]bool{}
	for _, id := range got {
		have[id] = true
	}
	for _, id := range want {
		if !have[id] {
			t.Errorf("%s: no Usage Report for URR %d (reports for %v)", step, id, got)
		}
	}
}

// gnbTunnel is an Outer Header Creation to a gNB: GTP-U/UDP/IPv4.
func gnbTunnel(teid uint32, addr string) *ie.IE {
	return ie.NewOuterHeaderCreation(0x0100, teid, addr, "", 0, 0, 0)
}

// ohr1 is Outer Header Removal in its one-octet form (up to TS 29.244
// V15.3.0), as Open5GS encodes it (outer_header_removal_len = 1).
func ohr1(desc uint8) *ie.IE { return ie.New(ie.OuterHeaderRemoval, []byte{desc}) }

// Open5GS ---------------------------------------------------------------------

// Open5GS, an IPv4v6 PDU session (OHR 6, GTP-U/UDP/IP) with its IDs as
// smf_qos_flow_add (src/smf/context.c) hands them out: PDR 1 downlink,
// PDR 2 uplink, FAR 1 downlink, FAR 2 uplink, URR 1, QER 1; the CP/UP
// forwarding pair is PDR 3 (from the SMF) and PDR 4 with FAR 3 (to it).
const (
	o5gsUE   = "10.45.0.7"
	o5gsUE6  = "2001:db8:cafe:7::"
	o5gsDNN  = "internet"
	o5gsChID = 5  // OGS_PFCP_DEFAULT_CHOOSE_ID (lib/pfcp/context.h)
	o5gsIndi = 10 // OGS_PFCP_INDIRECT_DATA_FORWARDING_CHOOSE_ID
)

// o5gsAction is Apply Action as Open5GS encodes it since its move to
// TS 29.244 v16.9.1 (open5gs#1581): two octets, DROP..DFRT in the first
// (lib/pfcp/message.c, Apply Action is OGS_TLV_UINT16 of length 2;
// free5gc/go-upf#66 met the two octets from the Open5GS SMF).
func o5gsAction(flags uint8) *ie.IE { return ie.NewApplyAction(flags, 0) }

// o5gsNI is the DNN as Open5GS puts it in a Network Instance: DNS labels
// (ogs_fqdn_build in lib/pfcp/build.c, ogs_pfcp_build_create_pdr).
func o5gsNI() *ie.IE { return ie.NewNetworkInstanceFQDN(o5gsDNN) }

// o5gsURR is a URR of smf_qos_flow_add: volume, reported at 100 MiB
// (src/smf/context.c), as ogs_pfcp_build_create_urr sends it.
func o5gsURR(id uint32) *ie.IE {
	return ie.NewCreateURR(ie.NewURRID(id), ie.NewMeasurementMethod(0, 1, 0),
		ie.NewReportingTriggers(trigVolume, 0, 0), ie.NewVolumeThreshold(0x01, 100<<20, 0, 0))
}

// o5gsUpdateURR is the Update URR that every PDR-list modification carries
// for each URR of the session (smf_n4_build_pdr_to_modify_list,
// src/smf/n4-build.c). What ogs_pfcp_build_update_urr puts in depends on
// the modify flags; here the URR as it was created.
func o5gsUpdateURR(id uint32) *ie.IE {
	return ie.NewUpdateURR(ie.NewURRID(id), ie.NewMeasurementMethod(0, 1, 0),
		ie.NewReportingTriggers(trigVolume, 0, 0), ie.NewVolumeThreshold(0x01, 100<<20, 0, 0))
}

// o5gsDefaultFlow is the default QoS flow of smf_npcf_smpolicycontrol_handle_
// create (src/smf/npcf-handler.c): downlink PDR with the UE address (S/D),
// uplink PDR on a chosen F-TEID (V4|V6|CH|CHID, CHOOSE ID 5) with QFI 1,
// both at precedence 65535; the QER carries the session AMBR as its MBR.
func o5gsDefaultFlow() []*ie.IE { return o5gsDefaultFlowOf(o5gsUE, o5gsUE6) }

// o5gsDefaultFlowOf is o5gsDefaultFlow for another UE.
func o5gsDefaultFlowOf(ue, ue6 string) []*ie.IE {
	return []*ie.IE{
		ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(65535),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), o5gsNI(),
				ie.NewUEIPAddress(0x07, ue, ue6, 0, 0), ie.NewTGPPInterfaceType(ifTypeN6)),
			ie.NewFARID(1), ie.NewURRID(1), ie.NewQERID(1)),
		ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(65535),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0f, 0, nil, nil, o5gsChID),
				o5gsNI(), ie.NewUEIPAddress(0x03, ue, ue6, 0, 0), ie.NewQFI(1),
				ie.NewTGPPInterfaceType(ifTypeN3)),
			ohr1(6), ie.NewFARID(2), ie.NewQERID(1)),
		// Downlink buffers and notifies until the gNB answers; a BUFF FAR
		// names the session's BAR (ogs_pfcp_build_create_far).
		ie.NewCreateFAR(ie.NewFARID(1), o5gsAction(0x0c), ie.NewBARID(1)),
		ie.NewCreateFAR(ie.NewFARID(2), o5gsAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), o5gsNI(),
				ie.NewTGPPInterfaceType(ifTypeN6))),
		o5gsURR(1),
		ie.NewCreateQER(ie.NewQERID(1), ie.NewGateStatus(0, 0), ie.NewMBR(1_000_000, 2_000_000), ie.NewQFI(1)),
		ie.NewCreateBAR(ie.NewBARID(1)),
	}
}

// o5gsSessionIEs are the session-level IEs of smf_n4_build_session_
// establishment_request (src/smf/n4-build.c): PDN Type, User ID, APN/DNN,
// S-NSSAI.
func o5gsSessionIEs() []*ie.IE {
	return []*ie.IE{
		ie.NewPDNType(ie.PDNTypeIPv4v6),
		ie.NewUserID(0x01, "001010000000007", "", "", ""),
		ie.NewAPNDNN(o5gsDNN),
		ie.NewSNSSAI(1, 0xffffff),
	}
}

// o5gsCPForwarding is smf_sess_create_cp_up_data_forwarding
// (src/smf/context.c) as npcf-handler.c fills it in: PDR 3 from the SMF
// (source CP-function, CHOOSE without an ID) into the downlink FAR, and
// PDR 4, the UE's Router Solicitations, on the uplink's CHOOSE ID to FAR 3,
// which tunnels them to the SMF (destination CP-function) — both at
// precedence 255 (OGS_PFCP_{CP2UP,UP2CP}_PDR_PRECEDENCE).
func o5gsCPForwarding() []*ie.IE {
	return []*ie.IE{
		ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCPFunction), ie.NewFTEID(0x07, 0, nil, nil, 0)),
			ohr1(6), ie.NewFARID(1)),
		ie.NewCreatePDR(ie.NewPDRID(4), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0f, 0, nil, nil, o5gsChID),
				o5gsNI(), ie.NewSDFFilter("permit out 58 from ff02::2/128 to assigned", "", "", "", 0),
				ie.NewTGPPInterfaceType(ifTypeN3)),
			ohr1(6), ie.NewFARID(3)),
		ie.NewCreateFAR(ie.NewFARID(3), o5gsAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCPFunction),
				ie.NewOuterHeaderCreation(0x0100, 7, profileSMF.String(), "", 0, 0, 0))),
	}
}

// o5gsActivate is ogs_pfcp_build_update_far_activate (lib/pfcp/build.c) on
// the downlink FAR, with the session's Update URR: FORW into the gNB's
// tunnel; SNDEM in PFCPSMReq-Flags when a handover asked for End Markers.
func o5gsActivate(teid uint32, gnb string, endMarker bool) []*ie.IE {
	fp := []*ie.IE{ie.NewDestinationInterface(ie.DstInterfaceAccess), gnbTunnel(teid, gnb)}
	if endMarker {
		fp = append(fp, ie.NewPFCPSMReqFlags(0x02))
	}
	return []*ie.IE{
		ie.NewUpdateFAR(ie.NewFARID(1), o5gsAction(0x02), ie.NewUpdateForwardingParameters(fp...)),
		o5gsUpdateURR(1),
	}
}

func TestPrivilegedProfileOpen5GS(t *testing.T) {
	n := newN4(t)
	// smf_n4_build_association_setup_request: Node ID, Recovery Time Stamp,
	// CP Function Features (one octet).
	profileAssociate(t, n, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_650_000_000, 0)), ie.NewCPFunctionFeatures(0))
	s := &smfSession{t: t, n: n, cp: 0x0000_0001_0000_0007}

	// The establishment without the UP-to-CP pair (PDR 4, FAR 3), which
	// the server refuses: see the subtest below.
	ies := append(o5gsDefaultFlow(), o5gsCPForwarding()[0])
	c := s.establish(append(ies, o5gsSessionIEs()...)...)
	ulTEID := chosenTEID(t, c, 2)
	if cp := chosenTEID(t, c, 3); cp == ulTEID {
		t.Errorf("PDR 3 chose without a CHOOSE ID but got PDR 2's TEID %#x", cp)
	}
	if _, ok := c[1]; ok {
		t.Errorf("a Created PDR for PDR 1, which chose nothing")
	}

	// PDU Session Resource Setup Response: OGS_PFCP_MODIFY_DL_ONLY|ACTIVATE
	// through smf_n4_build_pdr_to_modify_list (src/smf/n4-build.c).
	s.modify("N2 setup: downlink to the gNB", o5gsActivate(0x1001, servingGNB, false)...)

	// AN release: DL_ONLY|DEACTIVATE, ogs_pfcp_build_update_far_deactivate:
	// BUFF|NOCP with the BAR.
	s.modify("AN release: buffer and notify",
		ie.NewUpdateFAR(ie.NewFARID(1), o5gsAction(0x0c), ie.NewBARID(1)), o5gsUpdateURR(1))

	// Service Request: the gNB's new tunnel, FORW again.
	s.modify("service request: forward again", o5gsActivate(0x1002, servingGNB, false)...)

	// A dedicated QoS flow from a PCC rule (smf_qos_flow_binding,
	// src/smf/binding.c; smf_n4_build_qos_flow_to_modify_list): a PDR pair
	// at the rule's precedence with its SDF filter written for downlink,
	// the uplink one on CHOOSE ID 5 again, QFI 2; the new downlink FAR
	// buffers until the gNB takes the flow; QER with MBR and GBR; a URR.
	flow := ie.NewSDFFilter("permit out 17 from 198.51.100.10 5000-5010 to assigned", "", "", "", 0)
	add := s.modify("dedicated QoS flow: add",
		ie.NewCreatePDR(ie.NewPDRID(5), ie.NewPrecedence(100),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), o5gsNI(), flow,
				ie.NewUEIPAddress(0x07, o5gsUE, o5gsUE6, 0, 0), ie.NewTGPPInterfaceType(ifTypeN6)),
			ie.NewFARID(4), ie.NewURRID(2), ie.NewQERID(2)),
		ie.NewCreatePDR(ie.NewPDRID(6), ie.NewPrecedence(100),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0f, 0, nil, nil, o5gsChID),
				o5gsNI(), flow, ie.NewUEIPAddress(0x03, o5gsUE, o5gsUE6, 0, 0), ie.NewQFI(2),
				ie.NewTGPPInterfaceType(ifTypeN3)),
			ohr1(6), ie.NewFARID(5), ie.NewQERID(2)),
		ie.NewCreateFAR(ie.NewFARID(4), o5gsAction(0x0c), ie.NewBARID(1)),
		ie.NewCreateFAR(ie.NewFARID(5), o5gsAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), o5gsNI(),
				ie.NewTGPPInterfaceType(ifTypeN6))),
		ie.NewCreateQER(ie.NewQERID(2), ie.NewGateStatus(0, 0), ie.NewMBR(20_000, 20_000),
			ie.NewGBR(10_000, 10_000), ie.NewQFI(2)),
		o5gsURR(2))
	// The CHOOSE ID is scoped to one message (§5.5.3): the flow may get a
	// new TEID, but must get one. See the subtest on sharing it.
	chosenTEID(t, createdIn(t, add.CreatedPDR), 6)

	// The gNB took the flow: its downlink FAR forwards (QoS flow list,
	// OGS_PFCP_MODIFY_ACTIVATE).
	s.modify("dedicated QoS flow: activate",
		ie.NewUpdateFAR(ie.NewFARID(4), o5gsAction(0x02), ie.NewUpdateForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceAccess), gnbTunnel(0x1003, servingGNB))))

	// The PCC rule goes: Remove PDR/FAR/QER/URR of the flow. Its URR's
	// usage comes back in this answer.
	rm := s.modify("dedicated QoS flow: remove",
		ie.NewRemovePDR(ie.NewPDRID(5)), ie.NewRemovePDR(ie.NewPDRID(6)),
		ie.NewRemoveFAR(ie.NewFARID(4)), ie.NewRemoveFAR(ie.NewFARID(5)),
		ie.NewRemoveQER(ie.NewQERID(2)), ie.NewRemoveURR(ie.NewURRID(2)))
	wantURRs(t, "dedicated QoS flow: remove", reportedURRs(t, rm.UsageReport), 2)

	// N2 handover, Handover Request Acknowledge: indirect data forwarding
	// (smf_sess_create_indirect_data_forwarding, src/smf/context.c): an
	// Access-to-Access PDR on CHOOSE ID 10 with the flow's QER and QFI,
	// precedence 4096, its FAR into the target gNB's forwarding tunnel.
	fwd := s.modify("N2 handover: indirect forwarding",
		ie.NewCreatePDR(ie.NewPDRID(7), ie.NewPrecedence(4096),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0f, 0, nil, nil, o5gsIndi),
				o5gsNI(), ie.NewQFI(1)),
			ohr1(6), ie.NewFARID(6), ie.NewQERID(1)),
		ie.NewCreateFAR(ie.NewFARID(6), o5gsAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
				gnbTunnel(0x2001, targetGNB), ie.NewTGPPInterfaceType(ifTypeDLForwarding))))
	if fw := chosenTEID(t, createdIn(t, fwd.CreatedPDR), 7); fw == ulTEID {
		t.Errorf("the forwarding tunnel got the session's N3 TEID %#x", fw)
	}
	// Handover Notify: ACTIVATE|N2_HANDOVER|END_MARKER, the path switches
	// to the target gNB with SNDEM; then the forwarding PDR/FAR go
	// (OGS_PFCP_MODIFY_INDIRECT|OGS_PFCP_MODIFY_REMOVE).
	s.modify("N2 handover: switch with End Marker", o5gsActivate(0x2002, targetGNB, true)...)
	s.modify("N2 handover: forwarding removed", ie.NewRemovePDR(ie.NewPDRID(7)), ie.NewRemoveFAR(ie.NewFARID(6)))

	wantURRs(t, "deletion", s.release(), 1)

	t.Run("establishment with the CP/UP forwarding PDRs", func(t *testing.T) {
		// FAR 3 (Destination Interface CP-function, Outer Header Creation to
		// the SMF's GTP-U address) carries UP-to-CP data (§5.3.1, §8.2.24);
		// a UPF with N3 and N6 only sends it from its N3 address.
		n := newN4(t)
		profileAssociate(t, n, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_650_000_000, 0)), ie.NewCPFunctionFeatures(0))
		s := &smfSession{t: t, n: n, cp: 8}
		ies := append(o5gsDefaultFlow(), o5gsCPForwarding()...)
		c := s.establish(append(ies, o5gsSessionIEs()...)...)
		if ul, rs := chosenTEID(t, c, 2), chosenTEID(t, c, 4); ul != rs {
			t.Errorf("PDRs 2 and 4 share CHOOSE ID %d but got TEIDs %#x and %#x", o5gsChID, ul, rs)
		}
		chosenTEID(t, c, 3)
		wantURRs(t, "deletion", s.release(), 1)
	})

	t.Run("dedicated flow on the session's N3 tunnel", func(t *testing.T) {
		// Open5GS asks for a dedicated flow's uplink F-TEID with the session's
		// CHOOSE ID 5 in a later modification and expects the session's N3
		// TEID back (its gNB keeps one uplink tunnel per PDU session): a
		// CHOOSE ID keeps its TEID for the session's life.
		n := newN4(t)
		profileAssociate(t, n, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_650_000_000, 0)), ie.NewCPFunctionFeatures(0))
		s := &smfSession{t: t, n: n, cp: 9}
		ul := chosenTEID(t, s.establish(o5gsDefaultFlow()...), 2)
		add := s.modify("dedicated QoS flow: add",
			ie.NewCreatePDR(ie.NewPDRID(6), ie.NewPrecedence(100),
				ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0f, 0, nil, nil, o5gsChID),
					o5gsNI(), ie.NewUEIPAddress(0x03, o5gsUE, o5gsUE6, 0, 0), ie.NewQFI(2)),
				ohr1(6), ie.NewFARID(2)))
		if got := chosenTEID(t, createdIn(t, add.CreatedPDR), 6); got != ul {
			t.Errorf("dedicated flow's uplink TEID %#x, want the session's %#x", got, ul)
		}
	})
}

// free5GC ---------------------------------------------------------------------

// free5GC allocates the N3 TEIDs itself (GenerateTEID, internal/context)
// on the UPF's N3 address from its configuration: no CHOOSE, no Created
// PDR needed. The UE address is its own too.
const (
	f5gcUE   = "10.60.0.1"
	f5gcTEID = 1
	f5gcDNN  = "internet"
)

// f5gcNI is the DNN as a plain string (NwInstFqdnEncoding off, the
// default; newNetworkInstanceIE in build_establishment.go).
func f5gcNI() *ie.IE { return ie.NewNetworkInstance(f5gcDNN) }

// f5gcAny is the default PCC rule's flow, which free5GC puts in both PDRs
// of its path (UpdateFlowDescription: uplink and downlink the same,
// pcc_rule.go).
func f5gcAny() *ie.IE {
	return ie.NewSDFFilter("permit out ip from any to assigned", "", "", "", 0)
}

// f5gcURR is one of the two URRs addUrrToPath puts on every PDR
// (datapath.go): measure before (MBQE) and after QoS enforcement, counting
// packets too (MNOP); volume, periodic and at a threshold split UL/DL
// (newCreateURRIE, build_establishment.go).
func f5gcURR(id uint32, mbqe bool) *ie.IE {
	info := uint8(0x10) // MNOP
	if mbqe {
		info |= 0x01
	}
	return ie.NewCreateURR(ie.NewURRID(id), ie.NewMeasurementMethod(0, 1, 0),
		ie.NewReportingTriggers(trigPeriodic|trigVolume, 0, 0), ie.NewMeasurementPeriod(60*time.Second),
		ie.NewVolumeThreshold(0x06, 0, 1<<30, 1<<30), ie.NewMeasurementInformation(info))
}

// f5gcDownlinkPDR is the anchor's downlink PDR as newCreatePDRIE and
// newUpdatePDRIE write it: the whole PDR, URRs then QERs.
func f5gcDownlinkPDR(wrap func(...*ie.IE) *ie.IE) *ie.IE {
	return wrap(ie.NewPDRID(2), ie.NewPrecedence(255),
		ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), f5gcNI(), ie.NewUEIPAddress(0x06, f5gcUE, "", 0, 0), f5gcAny()),
		ie.NewFARID(2), ie.NewURRID(1), ie.NewURRID(2), ie.NewQERID(1), ie.NewQERID(2))
}

func TestPrivilegedProfileFree5GC(t *testing.T) {
	n := newN4(t)
	// BuildPfcpAssociationSetupRequest: Node ID, Recovery Time Stamp, CP
	// Function Features 0.
	profileAssociate(t, n, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_660_000_000, 0)), ie.NewCPFunctionFeatures(0))
	s := &smfSession{t: t, n: n, cp: 1}

	// ActivateTunnelAndPDR (datapath.go) through BuildSessionEstablishmentRequest:
	// uplink PDR on the TEID free5GC chose, OHR GTP-U/UDP/IPv4; downlink PDR
	// on the UE address; two QERs on each PDR, the default flow's (QFI, no
	// rate) and the session AMBR's; two URRs on each. The downlink FAR
	// forwards to Access with no tunnel yet. Apply Action in one octet.
	c := s.establish(
		ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x01, f5gcTEID, n3.AsSlice(), nil, 0),
				f5gcNI(), ie.NewUEIPAddress(0x02, f5gcUE, "", 0, 0), f5gcAny()),
			ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1),
			ie.NewURRID(1), ie.NewURRID(2), ie.NewQERID(1), ie.NewQERID(2)),
		f5gcDownlinkPDR(ie.NewCreatePDR),
		ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), f5gcNI())),
		ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess))),
		f5gcURR(1, true), f5gcURR(2, false),
		ie.NewCreateQER(ie.NewQERID(1), ie.NewGateStatus(0, 0), ie.NewQFI(1)),
		ie.NewCreateQER(ie.NewQERID(2), ie.NewGateStatus(0, 0), ie.NewMBR(1_000_000, 2_000_000), ie.NewQFI(1)),
		ie.NewPDNType(ie.PDNTypeIPv4))
	if len(c) != 0 {
		t.Errorf("%d Created PDRs for a request that chose nothing", len(c))
	}

	// Every modification carries the CP F-SEID (BuildSessionModificationRequest).
	cpFSEID := ie.NewFSEID(s.cp, profileSMF, nil)
	// PDU Session Resource Setup Response (N2SmInfoType PDU_RES_SETUP_RSP,
	// internal/sbi/processor): the downlink rules in state RULE_UPDATE go
	// out whole, an Update PDR with its PDI and an Update FAR into the gNB's
	// tunnel. v3 builds (farToUpdateFAR, internal/pfcp/message/build.go)
	// always put PFCPSMReq-Flags in, zero without SNDEM.
	s.modify("N2 setup: downlink to the gNB", cpFSEID,
		f5gcDownlinkPDR(ie.NewUpdatePDR),
		ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02), ie.NewUpdateForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceAccess), f5gcNI(), gnbTunnel(0x3001, servingGNB), ie.NewPFCPSMReqFlags(0))))

	// AN release, UpCnxState DEACTIVATED (handleUpCnxStateDeactivate):
	// BUFF|NOCP, the forwarding parameters still there but the tunnel
	// dropped from them, so not sent.
	s.modify("AN release: buffer and notify", cpFSEID,
		ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x0c), ie.NewUpdateForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceAccess), f5gcNI())))

	// Service Request: the setup response again, with the new tunnel.
	s.modify("service request: forward again", cpFSEID,
		f5gcDownlinkPDR(ie.NewUpdatePDR),
		ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02), ie.NewUpdateForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceAccess), f5gcNI(), gnbTunnel(0x3002, servingGNB))))

	// Charging asks for the usage so far (QueryReport on a user location
	// change, internal/sbi/processor): Query URR, answered with a Usage
	// Report each.
	q := s.modify("query URRs", cpFSEID, ie.NewQueryURR(ie.NewURRID(1)), ie.NewQueryURR(ie.NewURRID(2)))
	wantURRs(t, "query URRs", reportedURRs(t, q.UsageReport), 1, 2)

	// A PCC rule with its own QoS gets its own data path (ApplyPccRules,
	// internal/context/sm_context_policy.go): PDRs at the rule's precedence
	// with the rule's flow in both (UpdateDataPathFlowDescription, same
	// description up and down), the uplink one on the session's single N3
	// TEID (AddDataPathForwardingParameters, pcc_rule.go), QERs of the flow
	// and the session AMBR, the session's URRs.
	flow := ie.NewSDFFilter("permit out 17 from 198.51.100.10 to assigned", "", "", "", 0)
	s.modify("PCC rule flow: add", cpFSEID,
		ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(100),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x01, f5gcTEID, n3.AsSlice(), nil, 0),
				f5gcNI(), ie.NewUEIPAddress(0x02, f5gcUE, "", 0, 0), flow),
			ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(3),
			ie.NewURRID(1), ie.NewURRID(2), ie.NewQERID(3), ie.NewQERID(2)),
		ie.NewCreatePDR(ie.NewPDRID(4), ie.NewPrecedence(100),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), f5gcNI(), ie.NewUEIPAddress(0x06, f5gcUE, "", 0, 0), flow),
			ie.NewFARID(4), ie.NewURRID(1), ie.NewURRID(2), ie.NewQERID(3), ie.NewQERID(2)),
		ie.NewCreateFAR(ie.NewFARID(3), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), f5gcNI())),
		ie.NewCreateFAR(ie.NewFARID(4), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess), f5gcNI(), gnbTunnel(0x3002, servingGNB))),
		ie.NewCreateQER(ie.NewQERID(3), ie.NewGateStatus(0, 0), ie.NewMBR(20_000, 20_000), ie.NewGBR(10_000, 10_000), ie.NewQFI(2)))

	// The rule goes: its PDRs and FARs are removed (RULE_REMOVE); the
	// builder has no Remove QER, the QER stays.
	s.modify("PCC rule flow: remove", cpFSEID,
		ie.NewRemovePDR(ie.NewPDRID(3)), ie.NewRemovePDR(ie.NewPDRID(4)),
		ie.NewRemoveFAR(ie.NewFARID(3)), ie.NewRemoveFAR(ie.NewFARID(4)))

	// Xn handover, Path Switch Request Transfer: the downlink FAR to the
	// target gNB, SendEndMarker → PFCPSMReq-Flags SNDEM
	// (newUpdateForwardingParametersIE, build_modification.go).
	s.modify("Xn handover: path switch with End Marker", cpFSEID,
		ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02), ie.NewUpdateForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceAccess), f5gcNI(), gnbTunnel(0x4001, targetGNB), ie.NewPFCPSMReqFlags(0x02))))

	wantURRs(t, "deletion", s.release(), 1, 2)
}

// OAI-CN5G ---------------------------------------------------------------------

// OAI builds its rules per edge of the UPF graph (smf_procedure.cpp): an
// uplink edge (N6) owns the uplink FAR and QER and the downlink PDR; a
// downlink edge (N3) the downlink FAR and QER and the uplink PDR. A QER
// opens and rates one direction only. With usage reporting enabled the one
// URR is made on the N3 edge, so only the uplink PDR names it; the
// downlink PDR names none here (pfcp_create_pdr puts in its edge's URR ID
// regardless, so OAI may encode URR ID 0 there, which names no URR).
const (
	oaiUE   = "12.1.1.2"
	oaiQFI  = 9 // the default 5QI, used as the QFI
	oaiChID = 42
	oaiPrec = 65535
)

// oaiNI is the edge's network instance as configured per UPF interface.
func oaiNI(nwi string) *ie.IE { return ie.NewNetworkInstance(nwi) }

const (
	oaiAccess = "access.oai.org"
	oaiCore   = "core.oai.org"
)

// oaiSDF is the default flow's match-all filter (the selection criteria of
// session_create_sm_context_procedure::run), put in each PDR by
// pfcp_sdf_filter for a bidirectional flow.
func oaiSDF() *ie.IE {
	return ie.NewSDFFilter("permit out ip from any to assigned", "", "", "", 0)
}

// oaiUplink are the uplink edge's FAR and QER (pfcp_create_far,
// pfcp_create_qer on an uplink edge).
func oaiUplink(far, qer uint32, qfi uint8) []*ie.IE {
	return []*ie.IE{
		ie.NewCreateFAR(ie.NewFARID(far), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), oaiNI(oaiCore))),
		ie.NewCreateQER(ie.NewQERID(qer), ie.NewGateStatus(0, 0), ie.NewMBR(100_000, 0), ie.NewQFI(qfi)),
	}
}

// oaiDownlink are the downlink edge's FAR (into the gNB's tunnel) and QER.
func oaiDownlink(far, qer uint32, qfi uint8, teid uint32, gnb string) []*ie.IE {
	return []*ie.IE{
		ie.NewCreateFAR(ie.NewFARID(far), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess), oaiNI(oaiAccess), gnbTunnel(teid, gnb))),
		ie.NewCreateQER(ie.NewQERID(qer), ie.NewGateStatus(0, 0), ie.NewMBR(0, 200_000), ie.NewQFI(qfi)),
	}
}

// oaiUplinkPDR is pfcp_create_pdr on the N3 edge: tunnelled, so OHR and
// the QFI; the F-TEID chosen on CHOOSE ID 42 (pfcp_prepare_fteid) or, once
// known, given as it was created.
func oaiUplinkPDR(id uint16, prec uint32, fteid *ie.IE, far, qer uint32, qfi uint8, sdf *ie.IE, urr ...uint32) *ie.IE {
	kids := []*ie.IE{ie.NewPDRID(id), ie.NewPrecedence(prec),
		ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), oaiNI(oaiAccess), fteid,
			ie.NewUEIPAddress(0x02, oaiUE, "", 0, 0), ie.NewQFI(qfi), sdf, ie.NewTGPPInterfaceType(ifTypeN3)),
		ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(far), ie.NewQERID(qer)}
	for _, u := range urr {
		kids = append(kids, ie.NewURRID(u))
	}
	return ie.NewCreatePDR(kids...)
}

// oaiDownlinkPDR is pfcp_build_pdi on the N6 edge: no F-TEID, no QFI, no
// OHR, and the Source Interface Type left at its zero value.
func oaiDownlinkPDR(wrap func(...*ie.IE) *ie.IE, id uint16, prec uint32, far, qer uint32, sdf *ie.IE) *ie.IE {
	kids := []*ie.IE{ie.NewPDRID(id), ie.NewPrecedence(prec),
		ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), oaiNI(oaiCore),
			ie.NewUEIPAddress(0x06, oaiUE, "", 0, 0), sdf, ie.NewTGPPInterfaceType(0)),
		ie.NewFARID(far)}
	if qer != 0 {
		kids = append(kids, ie.NewQERID(qer))
	}
	return wrap(kids...)
}

// oaiURR is pfcp_create_urr: volume and duration, every 10 s, at 1000
// downlink octets or 5 s.
func oaiURR(id uint32) *ie.IE {
	return ie.NewCreateURR(ie.NewURRID(id), ie.NewMeasurementMethod(0, 1, 1),
		ie.NewMeasurementPeriod(10*time.Second), ie.NewReportingTriggers(trigPeriodic|trigVolume|trigTime, 0),
		ie.NewTimeThreshold(5*time.Second), ie.NewVolumeThreshold(0x04, 0, 0, 1000))
}

func TestPrivilegedProfileOAI(t *testing.T) {
	n := newN4(t)
	// The SMF-initiated setup (smf_n4.cpp): Node ID, Recovery Time Stamp,
	// CP Function Features with nothing set.
	profileAssociate(t, n, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_670_000_000, 0)), ie.NewCPFunctionFeatures(0))
	s := &smfSession{t: t, n: n, cp: 0x11}

	// send_n4_session_establishment_request: the URR, the uplink edge's
	// FAR and QER, and the uplink PDR only; the downlink side waits for
	// the gNB. No PDN Type for an IP session.
	ies := append([]*ie.IE{oaiURR(1)}, oaiUplink(1, 1, oaiQFI)...)
	ies = append(ies, oaiUplinkPDR(1, oaiPrec, ie.NewFTEID(0x0d, 0, nil, nil, oaiChID), 1, 1, oaiQFI, oaiSDF(), 1))
	// associate_fteid_with_created_pdrs: every QFI's PDR must come back
	// with its F-TEID, or the PDU session is rejected.
	ulTEID := chosenTEID(t, s.establish(ies...), 1)

	// The gNB answered (send_n4_session_modification_request): the
	// downlink edge's FAR and QER, the downlink PDR.
	mod := append(oaiDownlink(2, 2, oaiQFI, 0x5001, servingGNB), oaiDownlinkPDR(ie.NewCreatePDR, 2, oaiPrec, 2, 2, oaiSDF()))
	s.modify("N2 setup: downlink PDR and FAR", mod...)

	// AN release (PDU_SESSION_RELEASE_AN_INITIATED, remove_pdrs_fars_qers):
	// every PDR, FAR and QER goes, the URR stays.
	s.modify("AN release: rules removed",
		ie.NewRemovePDR(ie.NewPDRID(2)), ie.NewRemoveFAR(ie.NewFARID(1)), ie.NewRemoveQER(ie.NewQERID(1)),
		ie.NewRemovePDR(ie.NewPDRID(1)), ie.NewRemoveFAR(ie.NewFARID(2)), ie.NewRemoveQER(ie.NewQERID(2)))

	// Service Request, step 1 (SERVICE_REQUEST_UE_TRIGGERED_STEP1): the
	// uplink again, rule IDs anew but the QER IDs kept (clear_session does
	// not clear them, smf_qos_upf_edge.cpp), precedence one higher, a
	// fresh CHOOSE and a new URR.
	sr := append(oaiUplink(3, 1, oaiQFI),
		oaiUplinkPDR(3, oaiPrec+1, ie.NewFTEID(0x0d, 0, nil, nil, oaiChID), 3, 1, oaiQFI, oaiSDF(), 2), oaiURR(2))
	up := s.modify("service request: uplink", sr...)
	ulTEID = chosenTEID(t, createdIn(t, up.CreatedPDR), 3)

	// Step 2: the downlink to the gNB's new tunnel.
	mod = append(oaiDownlink(4, 2, oaiQFI, 0x5002, servingGNB), oaiDownlinkPDR(ie.NewCreatePDR, 4, oaiPrec+1, 4, 2, oaiSDF()))
	s.modify("service request: downlink", mod...)

	// Xn handover (HO_PATH_SWITCH_REQ): Update FAR and QER of the downlink
	// edge, Update PDR of the uplink edge (the downlink PDR, whole PDI);
	// no End Marker is asked for.
	s.modify("Xn handover: path switch",
		ie.NewUpdateFAR(ie.NewFARID(4), ie.NewApplyAction(0x02), ie.NewUpdateForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceAccess), gnbTunnel(0x6001, targetGNB))),
		ie.NewUpdateQER(ie.NewQERID(2), ie.NewGateStatus(0, 0), ie.NewMBR(0, 200_000), ie.NewQFI(oaiQFI)),
		oaiDownlinkPDR(ie.NewUpdatePDR, 4, oaiPrec+1, 4, 0, oaiSDF()))

	// A PCF-initiated QoS flow (send_n4_pcf_initiated_modification): the
	// default pair of edges cloned with the new QFI and IDs cleared; the
	// clone keeps the N3 edge's F-TEID, so the uplink PDR gives it
	// explicitly. Each PDR carries the flow in its own direction.
	fl := ie.NewSDFFilter("permit out 17 from 198.51.100.20 to assigned", "", "", "", 0)
	given := ie.NewFTEID(0x01, ulTEID, n3.AsSlice(), nil, 0)
	add := append(oaiUplink(5, 3, 2), oaiUplinkPDR(5, 100, given, 5, 3, 2, fl))
	add = append(add, oaiDownlink(6, 4, 2, 0x6001, targetGNB)...)
	add = append(add, oaiDownlinkPDR(ie.NewCreatePDR, 6, 100, 6, 4, fl))
	if r := s.modify("PCF QoS flow: add", add...); len(r.CreatedPDR) != 0 {
		t.Errorf("%d Created PDRs for an F-TEID that was given", len(r.CreatedPDR))
	}
	s.modify("PCF QoS flow: remove",
		ie.NewRemovePDR(ie.NewPDRID(5)), ie.NewRemoveFAR(ie.NewFARID(6)), ie.NewRemoveQER(ie.NewQERID(4)),
		ie.NewRemovePDR(ie.NewPDRID(6)), ie.NewRemoveFAR(ie.NewFARID(5)), ie.NewRemoveQER(ie.NewQERID(3)))

	wantURRs(t, "deletion", s.release(), 1, 2)
}
