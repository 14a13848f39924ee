// Package session is the UPF's model of PFCP sessions: rules as TS 29.244
// defines them (PDR, FAR, QER, URR, BAR), requests to create, change and
// delete them, and the Store that validates a request as a whole before
// anything changes. It knows neither the wire format nor the datapath.
package session

import "net/netip"

// Session is one PFCP session. It is never changed in place: a request
// yields a new Session, so the previous one stays intact for rollback.
type Session struct {
	SEID   uint64     // ours (the UP F-SEID)
	CPSEID uint64     // the SMF's
	CPAddr netip.Addr // the SMF's F-SEID address
	Peer   string     // node ID of the association it belongs to
	Info   Info
	PDRs   RuleSet[uint16, PDR]
	FARs   RuleSet[uint32, FAR]
	QERs   RuleSet[uint32, QER]
	URRs   RuleSet[uint32, URR]
	BARs   RuleSet[uint8, BAR]
}

// Info is what an establishment says of a session besides its rules:
// nothing the datapath forwards by, but what the operator finds the
// session by (the API shows it). The zero value is "not given".
type Info struct {
	PDNType uint8  // §8.2.79: 1 IPv4, 2 IPv6, 3 IPv4v6 (Non-IP and Ethernet are refused)
	UserID  string // §8.2.101, e.g. "imsi-001010000000001,imei-4370816125816151"
	DNN     string // APN/DNN (§8.2.103), as the SMF wrote it
	SNSSAI  string // §8.2.152: the SST, and the SD in hex when it is not "no SD": "1", "1-010203"
}

// Source interface values, TS 29.244 §8.2.2.
const (
	Access  uint8 = 0
	Core    uint8 = 1
	SGiLAN  uint8 = 2
	CPFunc  uint8 = 3
	Iface5G uint8 = 4 // 5G VN internal
)

// PDR is a packet detection rule (§5.2.1).
type PDR struct {
	ID         uint16
	Precedence uint32
	PDI        PDI
	OHR        *uint8 // outer header removal description (§8.2.64), nil = none
	FARID      uint32
	QERIDs     []uint32
	URRIDs     []uint32
}

// PDI is what a PDR matches.
type PDI struct {
	Source          uint8
	FTEID           *FTEID // local F-TEID
	NetworkInstance string
	UEIP            *UEIP
	SDFs            []SDF
	QFI             uint8  // 0 = any
	InterfaceType   *uint8 // 3GPP Interface Type of the source (§8.2.118), nil = not given
}

// FTEID is a local F-TEID. With Choose, the UPF picks it: one per
// ChooseID, with an address of each family wanted (neither: IPv4).
type FTEID struct {
	TEID               uint32
	V4, V6             netip.Addr // given, or once chosen, the UPF's
	Choose             bool
	ChooseV4, ChooseV6 bool
	ChooseID           uint8 // valid if HasChID
	HasChID            bool
}

// UEIP is the UE's address in a PDI (§8.2.62).
type UEIP struct {
	V4                 netip.Addr
	V6                 netip.Prefix
	Dest               bool // S/D: the address is the destination (downlink PDRs)
	ChooseV4, ChooseV6 bool
}

// SDF is one SDF Filter IE (§8.2.5): a flow description and companions.
type SDF struct {
	Flow      *Flow // parsed Flow Description, nil = any
	TOS       uint8
	TOSMask   uint8
	FlowLabel uint32
	HasLabel  bool
	// FilterID is the SDF Filter ID, with BID (§8.2.5). A filter with an
	// ID and no Flow Description stands for the session's filter with that
	// ID (Ref): Open5GS sends the description in the downlink PDR and only
	// the ID in the uplink one. The store fills such a filter in.
	FilterID uint32
	HasID    bool
	Ref      bool
}

// Flow is an IPFilterRule (RFC 6733 §4.3.1) as PFCP uses it: the rule is
// written for downlink ("out", from the remote to the UE, "assigned").
type Flow struct {
	Proto                    uint8        // 0 = ip (any)
	Src, Dst                 netip.Prefix // invalid = any; "assigned" = the UE's address
	SrcAssigned, DstAssigned bool
	SrcPorts, DstPorts       []PortRange
}

// PortRange is inclusive.
type PortRange struct{ Lo, Hi uint16 }

// Apply Action bits (§8.2.26), the 2-octet form.
const (
	ActDrop uint16 = 1 << 0
	ActForw uint16 = 1 << 1
	ActBuff uint16 = 1 << 2
	ActNocp uint16 = 1 << 3
	ActDupl uint16 = 1 << 4
	ActIPMA uint16 = 1 << 5
	ActIPMD uint16 = 1 << 6
	ActDFRT uint16 = 1 << 7
	ActEDRT uint16 = 1 << 8
	ActBDPN uint16 = 1 << 9
	ActDDPN uint16 = 1 << 10
)

// FAR is a forwarding action rule (§5.2.3).
type FAR struct {
	ID     uint32
	Action uint16
	Forw   *Forwarding // with FORW
	BARID  *uint8
}

// Forwarding is a FAR's forwarding parameters.
type Forwarding struct {
	Dest            uint8 // destination interface
	NetworkInstance string
	OHC             *OHC
	TOS             *uint8 // transport level marking: ToS/traffic class
	InterfaceType   *uint8 // 3GPP Interface Type of the destination (§8.2.118), nil = not given
	// EndMarker asks for an End Marker to the old peer on this change
	// (SNDEM in PFCPSMReq-Flags, §8.2.58).
	EndMarker bool
}

// OHC is outer header creation (§8.2.56): GTP-U toward Peer with TEID.
type OHC struct {
	TEID uint32
	Peer netip.Addr
	Port uint16 // 0 = 2152
}

// Gate status values (§8.2.7).
const (
	GateOpen   uint8 = 0
	GateClosed uint8 = 1
)

// QER is a QoS enforcement rule (§5.4).
type QER struct {
	ID             uint32
	CorrelationID  uint32
	GateUL, GateDL uint8
	MBRUL, MBRDL   uint64 // bit/s (the IE carries kbit/s)
	GBRUL, GBRDL   uint64
	QFI            uint8
	RQI            bool
}

// Measurement methods (§8.2.40) and reporting triggers (§8.2.41) we keep.
const (
	MeasDuration uint8 = 1 << 0
	MeasVolume   uint8 = 1 << 1
	MeasEvent    uint8 = 1 << 2
)

// URR is a usage reporting rule (§5.2.2).
type URR struct {
	ID            uint32
	Method        uint8
	Triggers      uint32 // reporting triggers, octets 5..7 as one number
	Period        uint32 // seconds, for PERIO
	VolThreshold  *Volume
	VolQuota      *Volume
	TimeThreshold uint32
	TimeQuota     uint32
	// QuotaHolding (QHT, §8.2.49): seconds without traffic after which
	// QUHTI reports; QuotaValidity (QVT, §8.2.174): seconds after the
	// grant when QUVTI reports. 0: none.
	QuotaHolding  uint32
	QuotaValidity uint32
	MBQE          bool // measure before QoS enforcement
	// Grant counts the quotas granted by Update URR: a new grant, even of
	// the same size, starts the quota over.
	Grant uint32
}

// Volume is total, uplink and downlink octets; nil fields are absent.
type Volume struct {
	Total, Uplink, Downlink *uint64
}

// BAR is a buffering action rule (§5.2.4).
type BAR struct {
	ID               uint8
	SuggestedPackets uint32 // 0 = the UPF's default
}

// Clone returns a deep enough copy to change without touching s.
func (s *Session) Clone() *Session {
	n := *s
	n.PDRs = s.PDRs.Clone()
	n.FARs = s.FARs.Clone()
	n.QERs = s.QERs.Clone()
	n.URRs = s.URRs.Clone()
	n.BARs = s.BARs.Clone()
	return &n
}

// Reporting Triggers (§8.2.41) as URR.Triggers holds them: octet 5 in
// bits 23..16, octet 6 in 15..8, octet 7 in 7..0.
const (
	RepPeriodic      uint32 = 1 << 16 // PERIO
	RepVolThreshold  uint32 = 1 << 17 // VOLTH
	RepTimeThreshold uint32 = 1 << 18 // TIMTH
	RepQuotaHolding  uint32 = 1 << 19 // QUHTI
	RepStart         uint32 = 1 << 20 // START: traffic seen
	RepVolQuota      uint32 = 1 << 8  // VOLQU
	RepTimeQuota     uint32 = 1 << 9  // TIMQU
	RepQuotaValidity uint32 = 1 << 15 // QUVTI

	// RepActedOn are the triggers the UPF reports on; a URR asking for
	// any other (STOPT, DROTH, LIUSA, ENVCL, MACAR, EVETH, EVEQU, IPMJL,
	// REEMR, UPINT) is refused.
	RepActedOn = RepPeriodic | RepVolThreshold | RepTimeThreshold | RepQuotaHolding | RepStart |
		RepVolQuota | RepTimeQuota | RepQuotaValidity
)

// triggerNames name the bits of Reporting Triggers, for refusals.
var triggerNames = map[uint32]string{
	1 << 21: "STOPT", 1 << 22: "DROTH", 1 << 23: "LIUSA", 1 << 10: "ENVCL", 1 << 11: "MACAR",
	1 << 12: "EVETH", 1 << 13: "EVEQU", 1 << 14: "IPMJL", 1 << 0: "REEMR", 1 << 1: "UPINT",
}
