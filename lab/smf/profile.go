package smf

import (
	"fmt"
	"net/netip"

	"github.com/wmnsk/go-pfcp/ie"
)

// Profile names the N4 flow sessions are driven with.
type Profile string

const (
	// Plain: one uplink PDR on a chosen or given F-TEID, one downlink PDR by
	// UE address into the gNB's tunnel, a FAR each, one QER (gates open,
	// MBR if asked for) and one volume-measuring URR on both.
	Plain Profile = "plain"
	// Open5GS: as the Open5GS SMF builds them (internal/pfcp/profiles_test.go):
	// IPv4v6, uplink on CHOOSE ID 5 with Outer Header Removal 6, the CP/UP
	// forwarding PDRs, the downlink buffering until the gNB's tunnel is set.
	Open5GS Profile = "open5gs"
	// Free5GC: as the free5GC SMF builds them: TEIDs given by the SMF, two
	// QERs and two URRs on each PDR, the downlink tunnel set afterwards.
	Free5GC Profile = "free5gc"
)

// Profiles are the known profiles.
var Profiles = []Profile{Plain, Open5GS, Free5GC}

// flow builds one profile's requests for a session. The session-level IEs
// common to all (Node ID, CP F-SEID, SEIDs) are the client's.
type flow interface {
	// prepare completes a new session with what the profile decides: QFI,
	// IPv6 prefix, given uplink TEID (zero: the UPF chooses).
	prepare(s *Session)
	// establishment is the Session Establishment Request's IEs after the
	// Node ID and CP F-SEID.
	establishment(s *Session) []*ie.IE
	// uplinkPDR is the PDR whose chosen F-TEID is the uplink tunnel.
	uplinkPDR() uint16
	// activates says whether activation is sent after the establishment.
	activates() bool
	// activation is the modification that sets the downlink tunnel once
	// the gNB has answered (PDU Session Resource Setup Response).
	activation(s *Session) []*ie.IE
	// pathSwitch is the modification of a handover of s to the gNB at to.
	pathSwitch(s *Session, to netip.Addr) []*ie.IE
	// rateQER is the QER that holds the session's MBR (its AMBR's).
	rateQER() uint32
}

func newFlow(cfg *Config) (flow, error) {
	switch cfg.Profile {
	case Plain:
		return plain{cfg}, nil
	case Open5GS:
		return open5gs{cfg}, nil
	case Free5GC:
		return free5gc{cfg}, nil
	}
	return nil, fmt.Errorf("smf: unknown profile %q; want one of %v", cfg.Profile, Profiles)
}

// IE values the profiles share (TS 29.244 §8.2).
const (
	actionForward       = 0x02 // FORW
	actionBufferNotify  = 0x0c // BUFF|NOCP
	ohrGTPUDPIPv4       = 0    // Outer Header Removal: GTP-U/UDP/IPv4
	ueV4                = 0x02 // UE IP Address: V4
	ueV4Dest            = 0x06 // V4, S/D: the address is the destination (downlink)
	fteidV4             = 0x01
	fteidV4Choose       = 0x0d // V4, CH, CHID
	smReqSendEndMarkers = 0x02 // PFCPSMReq-Flags SNDEM
	trigVolume          = 0x02 // Reporting Triggers octet 5: VOLTH
	trigPeriodic        = 0x01 // PERIO
)

// profileAMBR is the session AMBR the Open5GS and free5GC profile tests
// give (internal/pfcp/profiles_test.go), which both SMFs put in a QER as
// its MBR.
var profileAMBR = &Bitrate{UplinkKbps: 1_000_000, DownlinkKbps: 2_000_000}

// gtpuTunnel is Outer Header Creation GTP-U/UDP/IPv4 to a peer's tunnel
// (a gNB's, or the SMF's).
func gtpuTunnel(teid uint32, peer netip.Addr) *ie.IE {
	return ie.NewOuterHeaderCreation(0x0100, teid, peer.String(), "", 0, 0, 0)
}

// givenUplink gives s its uplink F-TEID: slot k's TEID at the UPF's N3
// address.
func givenUplink(cfg *Config, s *Session) {
	s.UplinkTEID = cfg.UplinkTEIDBase + uint32(s.slot)
	s.UplinkAddr = cfg.UPFN3
}

// uplinkFTEID is the uplink PDR's F-TEID: the given one, or CHOOSE with
// chooseID in the flags a profile uses for it.
func uplinkFTEID(s *Session, chooseFlags, chooseID uint8) *ie.IE {
	if s.UplinkTEID != 0 {
		return ie.NewFTEID(fteidV4, s.UplinkTEID, s.UplinkAddr.AsSlice(), nil, 0)
	}
	return ie.NewFTEID(chooseFlags, 0, nil, nil, chooseID)
}

// mbr is the QER's MBR IE: cfg.MBR, else def (nil: none).
func mbr(cfg *Config, def *Bitrate) []*ie.IE {
	if cfg.MBR != nil {
		return rateIEs(cfg.MBR)
	}
	return rateIEs(def)
}

// rateIEs is the MBR IE of r, or none for nil.
func rateIEs(r *Bitrate) []*ie.IE {
	if r == nil {
		return nil
	}
	return []*ie.IE{ie.NewMBR(r.UplinkKbps, r.DownlinkKbps)}
}

// updateMBR is the Update QER that sets the MBR of QER id to r; nil or
// zero rates police nothing (TS 29.244 §8.2.8: 0 is no limit for upfd).
func updateMBR(id uint32, r *Bitrate) *ie.IE {
	if r == nil {
		r = &Bitrate{}
	}
	return ie.NewUpdateQER(ie.NewQERID(id), ie.NewMBR(r.UplinkKbps, r.DownlinkKbps))
}

// createQER is a QER with both gates open, the rate IEs given (none: no
// MBR) and the QFI, in the order the SMFs write them.
func createQER(id uint32, rate []*ie.IE, qfi uint8) *ie.IE { return createGatedQER(id, 0, rate, qfi) }

// createGatedQER is createQER with both gates at gate: 0 open, 1 closed.
func createGatedQER(id uint32, gate uint8, rate []*ie.IE, qfi uint8) *ie.IE {
	kids := append([]*ie.IE{ie.NewQERID(id), ie.NewGateStatus(gate, gate)}, rate...)
	return ie.NewCreateQER(append(kids, ie.NewQFI(qfi))...)
}
