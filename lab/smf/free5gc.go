package smf

import (
	"net/netip"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
)

// free5gc builds sessions as the free5GC SMF does, as
// internal/pfcp/profiles_test.go learnt them from its sources
// (internal/pfcp/message/build_establishment.go, build_modification.go,
// internal/context/datapath.go): the SMF allocates the N3 TEID itself,
// every PDR names two URRs and two QERs, the downlink FAR has no tunnel
// until the gNB answers, and every modification carries the CP F-SEID.
type free5gc struct{ cfg *Config }

const (
	f5gcUplinkPDR   = 1
	f5gcDownlinkPDR = 2
	f5gcUplinkFAR   = 1
	f5gcDownlinkFAR = 2
	f5gcFlowQER     = 1 // the default flow's: QFI, no rate
	f5gcAMBRQER     = 2 // the session AMBR's
	f5gcURRBefore   = 1 // measured before QoS enforcement (MBQE)
	f5gcURRAfter    = 2
	f5gcQFI         = 1
	f5gcPrec        = 255
	// The default PCC rule's flow, in both PDRs (UpdateFlowDescription).
	f5gcAnyFlow = "permit out ip from any to assigned"
	miMBQE      = 0x01 // Measurement Information: measure before QoS enforcement
	miMNOP      = 0x10 // measure the number of packets
)

func (p free5gc) prepare(s *Session) {
	s.QFI = f5gcQFI
	givenUplink(p.cfg, s) // GenerateTEID: free5GC never asks the UPF to choose
}

// establishment is ActivateTunnelAndPDR through
// BuildSessionEstablishmentRequest.
func (p free5gc) establishment(s *Session) []*ie.IE {
	ni := p.networkInstance()
	return []*ie.IE{
		ie.NewCreatePDR(ie.NewPDRID(f5gcUplinkPDR), ie.NewPrecedence(f5gcPrec),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), uplinkFTEID(s, 0, 0), ni,
				ie.NewUEIPAddress(ueV4, s.UE.String(), "", 0, 0), f5gcFlow()),
			ie.NewOuterHeaderRemoval(ohrGTPUDPIPv4, 0), ie.NewFARID(f5gcUplinkFAR),
			ie.NewURRID(f5gcURRBefore), ie.NewURRID(f5gcURRAfter), ie.NewQERID(f5gcFlowQER), ie.NewQERID(f5gcAMBRQER)),
		p.downlinkPDR(ie.NewCreatePDR, s),
		ie.NewCreateFAR(ie.NewFARID(f5gcUplinkFAR), ie.NewApplyAction(actionForward),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), ni)),
		ie.NewCreateFAR(ie.NewFARID(f5gcDownlinkFAR), ie.NewApplyAction(actionForward),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess))),
		f5gcURR(f5gcURRBefore, miMBQE|miMNOP),
		f5gcURR(f5gcURRAfter, miMNOP),
		createQER(f5gcFlowQER, nil, s.QFI),
		createQER(f5gcAMBRQER, mbr(p.cfg, profileAMBR), s.QFI),
		ie.NewPDNType(ie.PDNTypeIPv4),
	}
}

// downlinkPDR is the anchor's downlink PDR, whole, as newCreatePDRIE and
// newUpdatePDRIE write it.
func (p free5gc) downlinkPDR(wrap func(...*ie.IE) *ie.IE, s *Session) *ie.IE {
	return wrap(ie.NewPDRID(f5gcDownlinkPDR), ie.NewPrecedence(f5gcPrec),
		ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), p.networkInstance(),
			ie.NewUEIPAddress(ueV4Dest, s.UE.String(), "", 0, 0), f5gcFlow()),
		ie.NewFARID(f5gcDownlinkFAR), ie.NewURRID(f5gcURRBefore), ie.NewURRID(f5gcURRAfter),
		ie.NewQERID(f5gcFlowQER), ie.NewQERID(f5gcAMBRQER))
}

func (free5gc) rateQER() uint32 { return f5gcAMBRQER }

func (free5gc) uplinkPDR() uint16 { return f5gcUplinkPDR }

func (free5gc) activates() bool { return true }

// activation is the PDU Session Resource Setup Response: the downlink
// PDR whole and its FAR into the gNB's tunnel, PFCPSMReq-Flags always
// present (farToUpdateFAR).
func (p free5gc) activation(s *Session) []*ie.IE {
	return []*ie.IE{fseid(s.CPSEID, p.cfg.NodeID), p.downlinkPDR(ie.NewUpdatePDR, s), p.forwardTo(s, s.GNB, 0)}
}

// pathSwitch is the Xn handover's Path Switch Request Transfer: the
// downlink FAR to the target gNB, End Markers on the old path.
func (p free5gc) pathSwitch(s *Session, to netip.Addr) []*ie.IE {
	return []*ie.IE{fseid(s.CPSEID, p.cfg.NodeID), p.forwardTo(s, to, smReqSendEndMarkers)}
}

func (p free5gc) forwardTo(s *Session, gnb netip.Addr, smReqFlags uint8) *ie.IE {
	return ie.NewUpdateFAR(ie.NewFARID(f5gcDownlinkFAR), ie.NewApplyAction(actionForward),
		ie.NewUpdateForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess), p.networkInstance(),
			gtpuTunnel(s.DownlinkTEID, gnb), ie.NewPFCPSMReqFlags(smReqFlags)))
}

// networkInstance is the DNN as a plain string (NwInstFqdnEncoding off,
// free5GC's default).
func (p free5gc) networkInstance() *ie.IE { return ie.NewNetworkInstance(p.cfg.DNN) }

func f5gcFlow() *ie.IE { return ie.NewSDFFilter(f5gcAnyFlow, "", "", "", 0) }

// f5gcURR is newCreateURRIE: volume, periodic every minute and at 1 GiB
// each way.
func f5gcURR(id uint32, info uint8) *ie.IE {
	return ie.NewCreateURR(ie.NewURRID(id), ie.NewMeasurementMethod(0, 1, 0),
		ie.NewReportingTriggers(trigPeriodic|trigVolume, 0, 0), ie.NewMeasurementPeriod(time.Minute),
		ie.NewVolumeThreshold(0x06, 0, 1<<30, 1<<30), ie.NewMeasurementInformation(info))
}
