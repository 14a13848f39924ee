package smf

import (
	"net/netip"

	"github.com/wmnsk/go-pfcp/ie"
)

// plain is the smallest session that forwards both ways and counts.
type plain struct{ cfg *Config }

// IDs of the plain session's rules.
const (
	plainUplinkPDR   = 1
	plainDownlinkPDR = 2
	plainUplinkFAR   = 1
	plainDownlinkFAR = 2
	plainQER         = 1
	plainURR         = 1
	plainQFI         = 9 // 5QI 9, the default bearer's, used as the QFI
	plainChooseID    = 1
	plainBAR         = 1
)

func (p plain) prepare(s *Session) {
	s.QFI = plainQFI
	if p.cfg.GiveUplinkTEIDs {
		givenUplink(p.cfg, s)
	}
}

func (p plain) establishment(s *Session) []*ie.IE { return p.withRules(s, Rules{MBR: p.cfg.MBR}) }

// withRules is the plain session with r's changes (see Rules).
func (p plain) withRules(s *Session, r Rules) []*ie.IE {
	ni := ie.NewNetworkInstance(p.cfg.DNN)
	downlink, gate := uint8(actionForward), uint8(0)
	if r.Buffer {
		downlink = actionBufferNotify
	}
	if r.GateClosed {
		gate = 1 // CLOSED (§8.2.7)
	}
	urr := []*ie.IE{ie.NewMeasurementMethod(0, 1, 0), ie.NewReportingTriggers(0, 0, 0)} // volume, at deletion
	if r.URR != nil {
		urr = r.URR.ies()
	}
	downlinkFAR := []*ie.IE{ie.NewFARID(plainDownlinkFAR), ie.NewApplyAction(downlink),
		ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess), gtpuTunnel(s.DownlinkTEID, s.GNB))}
	var bar []*ie.IE
	if r.Buffer && r.BufferCount > 0 {
		downlinkFAR = append(downlinkFAR, ie.NewBARID(plainBAR))
		bar = append(bar, ie.NewCreateBAR(ie.NewBARID(plainBAR), ie.NewSuggestedBufferingPacketsCount(r.BufferCount)))
	}
	return append([]*ie.IE{
		ie.NewCreatePDR(ie.NewPDRID(plainUplinkPDR), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), uplinkFTEID(s, fteidV4Choose, plainChooseID),
				ni, ie.NewUEIPAddress(ueV4, s.UE.String(), "", 0, 0)),
			ie.NewOuterHeaderRemoval(ohrGTPUDPIPv4, 0), ie.NewFARID(plainUplinkFAR),
			ie.NewQERID(plainQER), ie.NewURRID(plainURR)),
		ie.NewCreatePDR(ie.NewPDRID(plainDownlinkPDR), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ni, ie.NewUEIPAddress(ueV4Dest, s.UE.String(), "", 0, 0)),
			ie.NewFARID(plainDownlinkFAR), ie.NewQERID(plainQER), ie.NewURRID(plainURR)),
		ie.NewCreateFAR(ie.NewFARID(plainUplinkFAR), ie.NewApplyAction(actionForward),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), ni)),
		ie.NewCreateFAR(downlinkFAR...),
		createGatedQER(plainQER, gate, rateIEs(r.MBR), s.QFI),
		ie.NewCreateURR(append([]*ie.IE{ie.NewURRID(plainURR)}, urr...)...),
		ie.NewPDNType(ie.PDNTypeIPv4),
	}, bar...)
}

func (plain) rateQER() uint32 { return plainQER }

func (plain) uplinkPDR() uint16 { return plainUplinkPDR }

func (plain) activates() bool { return false }

func (plain) activation(*Session) []*ie.IE { return nil }

// pathSwitch moves the downlink FAR to the target gNB's tunnel and asks
// for End Markers on the old one.
func (plain) pathSwitch(s *Session, to netip.Addr) []*ie.IE {
	return []*ie.IE{
		ie.NewUpdateFAR(ie.NewFARID(plainDownlinkFAR), ie.NewApplyAction(actionForward),
			ie.NewUpdateForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
				gtpuTunnel(s.DownlinkTEID, to), ie.NewPFCPSMReqFlags(smReqSendEndMarkers))),
	}
}
