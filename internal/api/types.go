package api

import "time"

// The JSON the API answers with, as openapi.yaml describes it. SEIDs are
// strings ("0x1f"): a CP SEID has 64 bits, more than a JSON number carries
// exactly in most clients. Times are RFC 3339, UTC.

// Error is every refusal's body.
type Error struct {
	Error string `json:"error"`
	// Parameter is the query or path parameter at fault, if one is.
	Parameter string `json:"parameter,omitempty"`
}

// Health is the liveness answer: the process serves HTTP.
type Health struct {
	Status string `json:"status"` // "ok"
}

// Readiness says whether N4 is served.
type Readiness struct {
	Ready    bool   `json:"ready"`
	N4       string `json:"n4"` // "serving", "stopped" or "not answering"
	Draining bool   `json:"draining"`
	Reason   string `json:"reason,omitempty"` // when not ready
}

// Version is what runs.
type Version struct {
	Version string    `json:"version"`
	Go      string    `json:"go"`
	NodeID  string    `json:"node_id"`
	Started time.Time `json:"started"` // our Recovery Time Stamp
}

// Associations lists the SMFs' associations.
type Associations struct {
	Associations []Association `json:"associations"`
}

// Association is one SMF's.
type Association struct {
	NodeID    string     `json:"node_id"`
	Address   string     `json:"address"`
	Recovery  time.Time  `json:"recovery_time_stamp"`
	Since     time.Time  `json:"since"`
	State     string     `json:"state"` // "up" or "lost"
	LostSince *time.Time `json:"lost_since,omitempty"`
	Sessions  int        `json:"sessions"`
}

// SessionList is a page of sessions.
type SessionList struct {
	Sessions []SessionSummary `json:"sessions"`
	Total    int              `json:"total"` // sessions the filters select
	// NextCursor, when more follow, is the cursor of the next page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// SessionSummary is a session in a list.
type SessionSummary struct {
	SEID        string   `json:"seid"`
	CPSEID      string   `json:"cp_seid"`
	CPAddress   string   `json:"cp_address"`
	Peer        string   `json:"peer"`
	UEAddresses []string `json:"ue_addresses"`
	FTEIDs      []FTEID  `json:"f_teids"` // local, where uplink arrives
	Tunnels     []Tunnel `json:"tunnels"` // remote, where FARs send
	PDRs        int      `json:"pdrs"`
	FARs        int      `json:"fars"`
	QERs        int      `json:"qers"`
	URRs        int      `json:"urrs"`
	BARs        int      `json:"bars"`
}

// Session is one session with its rules and live counters.
type Session struct {
	SEID      string `json:"seid"`
	CPSEID    string `json:"cp_seid"`
	CPAddress string `json:"cp_address"`
	Peer      string `json:"peer"`
	// What the establishment said of the session: PDN type (ipv4, ipv6,
	// ipv4v6), User ID (imsi-..., imei-..., msisdn-..., nai-...), DNN and
	// S-NSSAI (SST, or SST-SD).
	PDNType string `json:"pdn_type,omitempty"`
	UserID  string `json:"user_id,omitempty"`
	DNN     string `json:"dnn,omitempty"`
	SNSSAI  string `json:"snssai,omitempty"`
	PDRs    []PDR  `json:"pdrs"`
	FARs    []FAR  `json:"fars"`
	QERs    []QER  `json:"qers"`
	URRs    []URR  `json:"urrs"`
	BARs    []BAR  `json:"bars"`
}

// FTEID is a local F-TEID.
type FTEID struct {
	TEID uint32 `json:"teid"`
	IPv4 string `json:"ipv4,omitempty"`
	IPv6 string `json:"ipv6,omitempty"`
}

// Tunnel is a GTP-U tunnel toward a peer (outer header creation).
type Tunnel struct {
	TEID uint32 `json:"teid"`
	Peer string `json:"peer"`
	Port uint16 `json:"port"`
}

// PDR is a packet detection rule.
type PDR struct {
	ID              uint16 `json:"id"`
	Precedence      uint32 `json:"precedence"`
	SourceInterface string `json:"source_interface"`
	// SourceInterfaceType is the 3GPP interface type (§8.2.118), e.g. "n3-3gpp-access".
	SourceInterfaceType string `json:"source_interface_type,omitempty"`
	FTEID               *FTEID `json:"f_teid,omitempty"`
	NetworkInstance     string `json:"network_instance,omitempty"`
	UEIP                *UEIP  `json:"ue_ip,omitempty"`
	SDFFilters          []SDF  `json:"sdf_filters,omitempty"`
	QFI                 uint8  `json:"qfi,omitempty"`
	// OuterHeaderRemoval is what is taken off, e.g. "gtp-u/udp/ipv4".
	OuterHeaderRemoval string   `json:"outer_header_removal,omitempty"`
	FARID              uint32   `json:"far_id"`
	QERIDs             []uint32 `json:"qer_ids"`
	URRIDs             []uint32 `json:"urr_ids"`
}

// UEIP is the UE's address a PDR matches.
type UEIP struct {
	IPv4       string `json:"ipv4,omitempty"`
	IPv6Prefix string `json:"ipv6_prefix,omitempty"`
	// Direction is "source" (uplink) or "destination" (downlink).
	Direction string `json:"direction"`
}

// SDF is an SDF filter.
type SDF struct {
	FlowDescription string     `json:"flow_description,omitempty"`
	TOSTrafficClass *TOSFilter `json:"tos_traffic_class,omitempty"`
	FlowLabel       *uint32    `json:"flow_label,omitempty"`
	FilterID        uint32     `json:"filter_id,omitempty"`
}

// TOSFilter is a ToS (IPv4) or Traffic Class (IPv6) value and mask.
type TOSFilter struct {
	Value uint8 `json:"value"`
	Mask  uint8 `json:"mask"`
}

// FAR is a forwarding action rule.
type FAR struct {
	ID          uint32      `json:"id"`
	ApplyAction []string    `json:"apply_action"` // DROP, FORW, BUFF, NOCP, DUPL
	Forwarding  *Forwarding `json:"forwarding,omitempty"`
	BARID       *uint8      `json:"bar_id,omitempty"`
}

// Forwarding is a FAR's forwarding parameters.
type Forwarding struct {
	DestinationInterface     string  `json:"destination_interface"`
	DestinationInterfaceType string  `json:"destination_interface_type,omitempty"`
	NetworkInstance          string  `json:"network_instance,omitempty"`
	OuterHeaderCreation      *Tunnel `json:"outer_header_creation,omitempty"`
	TransportLevelMarking    *uint8  `json:"transport_level_marking,omitempty"` // ToS / traffic class
}

// QER is a QoS enforcement rule. Bit rates are in bit/s.
type QER struct {
	ID            uint32   `json:"id"`
	CorrelationID uint32   `json:"correlation_id,omitempty"`
	Gate          Gates    `json:"gate"`
	MBR           BitRates `json:"mbr"`
	GBR           BitRates `json:"gbr"`
	QFI           uint8    `json:"qfi,omitempty"`
	RQI           bool     `json:"rqi"`
}

// Gates are a QER's gate per direction: "open" or "closed".
type Gates struct {
	Uplink   string `json:"uplink"`
	Downlink string `json:"downlink"`
}

// BitRates are per direction, in bit/s; 0 is none.
type BitRates struct {
	Uplink   uint64 `json:"uplink"`
	Downlink uint64 `json:"downlink"`
}

// URR is a usage reporting rule with what it has counted.
type URR struct {
	ID                uint32   `json:"id"`
	MeasurementMethod []string `json:"measurement_method"` // duration, volume, event
	ReportingTriggers []string `json:"reporting_triggers"` // PERIO, VOLTH, ...
	// MeasurementPeriod is PERIO's, in seconds.
	MeasurementPeriod uint32  `json:"measurement_period,omitempty"`
	VolumeThreshold   *Volume `json:"volume_threshold,omitempty"`
	VolumeQuota       *Volume `json:"volume_quota,omitempty"`
	TimeThreshold     uint32  `json:"time_threshold,omitempty"` // seconds
	TimeQuota         uint32  `json:"time_quota,omitempty"`     // seconds
	// Usage is what the datapath counted since the URR was created.
	Usage Usage `json:"usage"`
}

// Volume is a threshold or quota in octets; absent fields are not set.
type Volume struct {
	Total    *uint64 `json:"total,omitempty"`
	Uplink   *uint64 `json:"uplink,omitempty"`
	Downlink *uint64 `json:"downlink,omitempty"`
}

// Usage is a URR's traffic per direction. Bytes are those of the inner IP
// packets (the UE's), as TS 29.244 §5.2.2.2 counts them.
type Usage struct {
	Uplink   Traffic `json:"uplink"`
	Downlink Traffic `json:"downlink"`
}

// Traffic is packets and bytes.
type Traffic struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// BAR is a buffering action rule.
type BAR struct {
	ID uint8 `json:"id"`
	// SuggestedPackets is the SMF's suggested buffer; 0: upfd's default.
	SuggestedPackets uint32 `json:"suggested_buffering_packets"`
}

// Stats are the datapath's counters since it was loaded.
type Stats struct {
	Verdicts   Verdicts                  `json:"verdicts"`
	Drops      map[string]uint64         `json:"drops"` // by reason; only reasons that occurred
	Interfaces map[string]InterfaceStats `json:"interfaces"`
}

// Verdicts count packets by what the XDP program did with them.
type Verdicts struct {
	Aborted     uint64 `json:"aborted"`
	Dropped     uint64 `json:"dropped"`
	Passed      uint64 `json:"passed"` // to the kernel: ARP, PFCP, ...
	Transmitted uint64 `json:"transmitted"`
	Redirected  uint64 `json:"redirected"`
}

// InterfaceStats are an interface role's frames in and out, as the
// datapath saw them (frame bytes).
type InterfaceStats struct {
	Rx Traffic `json:"rx"`
	Tx Traffic `json:"tx"`
}

// Drain is whether new sessions are refused.
type Drain struct {
	Draining bool `json:"draining"`
}
