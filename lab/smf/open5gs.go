package smf

import (
	"fmt"
	"net/netip"

	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/lab/topo"
)

// open5gs builds sessions as the Open5GS SMF does for an IPv4v6 PDU
// session, as internal/pfcp/profiles_test.go learnt them from its sources
// (src/smf/npcf-handler.c, context.c, n4-build.c; lib/pfcp/build.c).
type open5gs struct {
	cfg *Config
}

// IDs as smf_qos_flow_add and smf_sess_create_cp_up_data_forwarding hand
// them out: PDR 1 downlink, PDR 2 uplink, PDR 3 from the SMF, PDR 4 the
// UE's Router Solicitations to it; FAR 1 downlink, 2 uplink, 3 to the SMF.
const (
	o5gsDownlinkPDR = 1
	o5gsUplinkPDR   = 2
	o5gsFromCPPDR   = 3
	o5gsToCPPDR     = 4
	o5gsDownlinkFAR = 1
	o5gsUplinkFAR   = 2
	o5gsToCPFAR     = 3
	o5gsURR         = 1
	o5gsQER         = 1
	o5gsBAR         = 1
	o5gsQFI         = 1
	o5gsChooseID    = 5     // OGS_PFCP_DEFAULT_CHOOSE_ID
	o5gsFlowPrec    = 65535 // the default flow's PDRs
	o5gsCPPrec      = 255   // OGS_PFCP_{CP2UP,UP2CP}_PDR_PRECEDENCE
	o5gsFTEIDChoose = 0x0f  // V4, V6, CH, CHID
	o5gsFTEIDAny    = 0x07  // V4, V6, CH: PDR 3 chooses without an ID
	o5gsUEBoth      = 0x03  // UE IP Address V4, V6
	o5gsUEBothDest  = 0x07  // V4, V6, S/D
	o5gsOHRGTPUIP   = 6     // Outer Header Removal GTP-U/UDP/IP
	ifTypeN3        = 11    // 3GPP Interface Type (§8.2.118)
	ifTypeN6        = 17
	// The Router Solicitations a UE sends for its IPv6 prefix go to the SMF.
	o5gsRouterSolicitation = "permit out 58 from ff02::2/128 to assigned"
)

func (p open5gs) prepare(s *Session) {
	s.QFI = o5gsQFI
	s.UEv6 = topo.UEPrefixV6(p.cfg.UEPoolV6, s.slot)
	if p.cfg.GiveUplinkTEIDs {
		givenUplink(p.cfg, s)
	}
}

// establishment is the default QoS flow, the CP/UP forwarding pair and the
// session IEs of smf_n4_build_session_establishment_request. The downlink
// buffers until the gNB answers (activation).
func (p open5gs) establishment(s *Session) []*ie.IE {
	ni := p.networkInstance()
	return []*ie.IE{
		ie.NewCreatePDR(ie.NewPDRID(o5gsDownlinkPDR), ie.NewPrecedence(o5gsFlowPrec),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ni, p.ueAddress(s, o5gsUEBothDest),
				ie.NewTGPPInterfaceType(ifTypeN6)),
			ie.NewFARID(o5gsDownlinkFAR), ie.NewURRID(o5gsURR), ie.NewQERID(o5gsQER)),
		ie.NewCreatePDR(ie.NewPDRID(o5gsUplinkPDR), ie.NewPrecedence(o5gsFlowPrec),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), uplinkFTEID(s, o5gsFTEIDChoose, o5gsChooseID),
				ni, p.ueAddress(s, o5gsUEBoth), ie.NewQFI(s.QFI), ie.NewTGPPInterfaceType(ifTypeN3)),
			o5gsOHR(), ie.NewFARID(o5gsUplinkFAR), ie.NewQERID(o5gsQER)),
		ie.NewCreatePDR(ie.NewPDRID(o5gsFromCPPDR), ie.NewPrecedence(o5gsCPPrec),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCPFunction), p.fromCPFTEID(s)),
			o5gsOHR(), ie.NewFARID(o5gsDownlinkFAR)),
		ie.NewCreatePDR(ie.NewPDRID(o5gsToCPPDR), ie.NewPrecedence(o5gsCPPrec),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), uplinkFTEID(s, o5gsFTEIDChoose, o5gsChooseID),
				ni, ie.NewSDFFilter(o5gsRouterSolicitation, "", "", "", 0), ie.NewTGPPInterfaceType(ifTypeN3)),
			o5gsOHR(), ie.NewFARID(o5gsToCPFAR)),
		// A buffering FAR names the session's BAR (ogs_pfcp_build_create_far).
		ie.NewCreateFAR(ie.NewFARID(o5gsDownlinkFAR), o5gsAction(actionBufferNotify), ie.NewBARID(o5gsBAR)),
		ie.NewCreateFAR(ie.NewFARID(o5gsUplinkFAR), o5gsAction(actionForward),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), ni, ie.NewTGPPInterfaceType(ifTypeN6))),
		// The SMF's tunnel for what PDR 4 catches: its GTP-U address, the
		// session's index as TEID.
		ie.NewCreateFAR(ie.NewFARID(o5gsToCPFAR), o5gsAction(actionForward),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCPFunction),
				gtpuTunnel(uint32(s.slot)+1, p.cfg.NodeID))),
		ie.NewCreateURR(o5gsURRIEs()...),
		createQER(o5gsQER, mbr(p.cfg, profileAMBR), s.QFI),
		ie.NewCreateBAR(ie.NewBARID(o5gsBAR)),
		ie.NewPDNType(ie.PDNTypeIPv4v6),
		ie.NewUserID(0x01, fmt.Sprintf("00101%010d", s.slot+1), "", "", ""), // IMSI
		ie.NewAPNDNN(p.cfg.DNN),
		ie.NewSNSSAI(1, 0xffffff),
	}
}

func (open5gs) rateQER() uint32 { return o5gsQER }

func (open5gs) uplinkPDR() uint16 { return o5gsUplinkPDR }

func (open5gs) activates() bool { return true }

// activation is ogs_pfcp_build_update_far_activate on the downlink FAR
// (PDU Session Resource Setup Response), with the session's Update URR.
func (p open5gs) activation(s *Session) []*ie.IE { return p.forwardTo(s, s.GNB, false) }

// pathSwitch is the same toward the target gNB, End Markers asked for on
// the old path (N2 handover notify).
func (p open5gs) pathSwitch(s *Session, to netip.Addr) []*ie.IE { return p.forwardTo(s, to, true) }

func (p open5gs) forwardTo(s *Session, gnb netip.Addr, endMarkers bool) []*ie.IE {
	fp := []*ie.IE{ie.NewDestinationInterface(ie.DstInterfaceAccess), gtpuTunnel(s.DownlinkTEID, gnb)}
	if endMarkers {
		fp = append(fp, ie.NewPFCPSMReqFlags(smReqSendEndMarkers))
	}
	return []*ie.IE{
		ie.NewUpdateFAR(ie.NewFARID(o5gsDownlinkFAR), o5gsAction(actionForward), ie.NewUpdateForwardingParameters(fp...)),
		// Every modification of the PDR list carries each URR of the
		// session (smf_n4_build_pdr_to_modify_list).
		ie.NewUpdateURR(o5gsURRIEs()...),
	}
}

// o5gsURRIEs are the URR of smf_qos_flow_add: volume, reported at 100 MiB.
func o5gsURRIEs() []*ie.IE {
	return []*ie.IE{ie.NewURRID(o5gsURR), ie.NewMeasurementMethod(0, 1, 0),
		ie.NewReportingTriggers(trigVolume, 0, 0), ie.NewVolumeThreshold(0x01, 100<<20, 0, 0)}
}

// o5gsAction is Apply Action in the two octets Open5GS sends since
// TS 29.244 v16.9.1.
func o5gsAction(flags uint8) *ie.IE { return ie.NewApplyAction(flags, 0) }

// o5gsOHR is Outer Header Removal GTP-U/UDP/IP in the one-octet form
// Open5GS encodes.
func o5gsOHR() *ie.IE { return ie.New(ie.OuterHeaderRemoval, []byte{o5gsOHRGTPUIP}) }

// networkInstance is the DNN in DNS labels, as Open5GS writes it.
func (p open5gs) networkInstance() *ie.IE { return ie.NewNetworkInstanceFQDN(p.cfg.DNN) }

func (open5gs) ueAddress(s *Session, flags uint8) *ie.IE {
	return ie.NewUEIPAddress(flags, s.UE.String(), s.UEv6.Addr().String(), 0, 0)
}

// fromCPFTEID is PDR 3's F-TEID: chosen without a CHOOSE ID, or, when the
// SMF gives TEIDs, one past the range of the uplink ones.
func (p open5gs) fromCPFTEID(s *Session) *ie.IE {
	if s.UplinkTEID == 0 {
		return ie.NewFTEID(o5gsFTEIDAny, 0, nil, nil, 0)
	}
	teid := p.cfg.UplinkTEIDBase + uint32(slotLimit(*p.cfg)) + uint32(s.slot)
	return ie.NewFTEID(fteidV4, teid, s.UplinkAddr.AsSlice(), nil, 0)
}
