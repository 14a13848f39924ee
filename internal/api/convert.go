package api

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/pfcp"
	"github.com/sluice-upf/sluice/internal/session"
)

// From the session model to the API's JSON, with the names TS 29.244
// gives values, so that what upfctl shows reads like a trace.

func seidString(seid uint64) string { return "0x" + strconv.FormatUint(seid, 16) }

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func associationOf(a pfcp.Association) Association {
	out := Association{NodeID: a.NodeID, Address: a.Addr.String(), Recovery: timeOf(a.Recovery), Since: timeOf(a.Since),
		State: "up", Sessions: a.Sessions}
	if !a.LostSince.IsZero() {
		lost := timeOf(a.LostSince)
		out.State, out.LostSince = "lost", &lost
	}
	return out
}

// timeOf is t as the API shows times: UTC, whole seconds (as PFCP's
// time stamps).
func timeOf(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

func summaryOf(x *session.Session) SessionSummary {
	s := SessionSummary{SEID: seidString(x.SEID), CPSEID: seidString(x.CPSEID), CPAddress: addrString(x.CPAddr), Peer: x.Peer,
		UEAddresses: []string{}, FTEIDs: []FTEID{}, Tunnels: []Tunnel{},
		PDRs: x.PDRs.Len(), FARs: x.FARs.Len(), QERs: x.QERs.Len(), URRs: x.URRs.Len(), BARs: x.BARs.Len()}
	for _, p := range x.PDRs.All() {
		if f := p.PDI.FTEID; f != nil && !slices.Contains(s.FTEIDs, fteidOf(f)) {
			s.FTEIDs = append(s.FTEIDs, fteidOf(f))
		}
		if u := p.PDI.UEIP; u != nil {
			for _, a := range []string{addrString(u.V4), prefixString(u.V6)} {
				if a != "" && !slices.Contains(s.UEAddresses, a) {
					s.UEAddresses = append(s.UEAddresses, a)
				}
			}
		}
	}
	for _, f := range x.FARs.All() {
		if f.Forw != nil && f.Forw.OHC != nil && !slices.Contains(s.Tunnels, tunnelOf(f.Forw.OHC)) {
			s.Tunnels = append(s.Tunnels, tunnelOf(f.Forw.OHC))
		}
	}
	return s
}

func prefixString(p netip.Prefix) string {
	if !p.IsValid() {
		return ""
	}
	return p.String()
}

func fteidOf(f *session.FTEID) FTEID {
	return FTEID{TEID: f.TEID, IPv4: addrString(f.V4), IPv6: addrString(f.V6)}
}

func tunnelOf(o *session.OHC) Tunnel {
	port := o.Port
	if port == 0 {
		port = 2152 // TS 29.281 §4.4.2.3
	}
	return Tunnel{TEID: o.TEID, Peer: addrString(o.Peer), Port: port}
}

func sessionOf(v pfcp.SessionView) Session {
	x := v.Session
	s := Session{SEID: seidString(x.SEID), CPSEID: seidString(x.CPSEID), CPAddress: addrString(x.CPAddr), Peer: x.Peer,
		PDNType: pdnTypeNames[x.Info.PDNType], UserID: x.Info.UserID, DNN: x.Info.DNN, SNSSAI: x.Info.SNSSAI,
		PDRs: []PDR{}, FARs: []FAR{}, QERs: []QER{}, URRs: []URR{}, BARs: []BAR{}}
	for _, p := range x.PDRs.All() {
		s.PDRs = append(s.PDRs, pdrOf(p))
	}
	for _, f := range x.FARs.All() {
		s.FARs = append(s.FARs, farOf(f))
	}
	for _, q := range x.QERs.All() {
		s.QERs = append(s.QERs, qerOf(q))
	}
	for id, u := range x.URRs.All() {
		s.URRs = append(s.URRs, urrOf(u, v.Usage[id]))
	}
	for _, b := range x.BARs.All() {
		s.BARs = append(s.BARs, BAR{ID: b.ID, SuggestedPackets: b.SuggestedPackets})
	}
	return s
}

// interfaceNames are source and destination interface values (§8.2.2,
// §8.2.24).
var interfaceNames = []string{"access", "core", "sgi-lan", "cp-function", "5g-vn-internal"}

func interfaceName(v uint8) string {
	if int(v) < len(interfaceNames) {
		return interfaceNames[v]
	}
	return fmt.Sprintf("interface-%d", v)
}

// pdnTypeNames are the PDN types (§8.2.79) a session may have.
var pdnTypeNames = map[uint8]string{1: "ipv4", 2: "ipv6", 3: "ipv4v6"}

// interfaceTypeNames are 3GPP interface types (§8.2.118).
var interfaceTypeNames = []string{"s1-u", "s5-s8-u", "s4-u", "s11-u", "s12-u", "gn-gp-u", "s2a-u", "s2b-u",
	"enodeb-dl-forwarding", "enodeb-ul-forwarding", "sgw-upf-dl-forwarding", "n3-3gpp-access",
	"n3-trusted-non-3gpp-access", "n3-untrusted-non-3gpp-access", "n3-data-forwarding", "n9", "sgi", "n6", "n19",
	"s8-u", "gp-u", "n9-non-roaming", "n9-l2", "n19-l2", "n6-l2", "n3mb", "n19mb"}

// interfaceTypeName names a 3GPP interface type, "" when none was given.
func interfaceTypeName(t *uint8) string {
	switch {
	case t == nil:
		return ""
	case int(*t) < len(interfaceTypeNames):
		return interfaceTypeNames[*t]
	}
	return fmt.Sprintf("interface-type-%d", *t)
}

// ohrNames are outer header removal descriptions (§8.2.64).
var ohrNames = []string{"gtp-u/udp/ipv4", "gtp-u/udp/ipv6", "udp/ipv4", "udp/ipv6", "ipv4", "ipv6", "gtp-u/udp/ip", "vlan-s-tag", "s-tag-and-c-tag"}

func pdrOf(p session.PDR) PDR {
	out := PDR{ID: p.ID, Precedence: p.Precedence, SourceInterface: interfaceName(p.PDI.Source),
		SourceInterfaceType: interfaceTypeName(p.PDI.InterfaceType),
		NetworkInstance:     p.PDI.NetworkInstance, QFI: p.PDI.QFI, FARID: p.FARID,
		QERIDs: nonNil(p.QERIDs), URRIDs: nonNil(p.URRIDs)}
	if f := p.PDI.FTEID; f != nil {
		v := fteidOf(f)
		out.FTEID = &v
	}
	if u := p.PDI.UEIP; u != nil {
		dir := "source"
		if u.Dest {
			dir = "destination"
		}
		out.UEIP = &UEIP{IPv4: addrString(u.V4), IPv6Prefix: prefixString(u.V6), Direction: dir}
	}
	for _, f := range p.PDI.SDFs {
		out.SDFFilters = append(out.SDFFilters, sdfOf(f))
	}
	if p.OHR != nil {
		out.OuterHeaderRemoval = fmt.Sprintf("description-%d", *p.OHR)
		if int(*p.OHR) < len(ohrNames) {
			out.OuterHeaderRemoval = ohrNames[*p.OHR]
		}
	}
	return out
}

func nonNil(ids []uint32) []uint32 {
	if ids == nil {
		return []uint32{}
	}
	return ids
}

func sdfOf(f session.SDF) SDF {
	out := SDF{FilterID: f.FilterID}
	if f.Flow != nil {
		out.FlowDescription = flowDescription(f.Flow)
	}
	if f.TOSMask != 0 {
		out.TOSTrafficClass = &TOSFilter{Value: f.TOS, Mask: f.TOSMask}
	}
	if f.HasLabel {
		l := f.FlowLabel
		out.FlowLabel = &l
	}
	return out
}

// flowDescription writes a flow back as the IPFilterRule it was read from
// (RFC 6733 §4.3.1), normalised.
func flowDescription(f *session.Flow) string {
	proto := "ip"
	if f.Proto != 0 {
		proto = strconv.Itoa(int(f.Proto))
	}
	return fmt.Sprintf("permit out %s from %s to %s", proto, flowEnd(f.Src, f.SrcAssigned, f.SrcPorts), flowEnd(f.Dst, f.DstAssigned, f.DstPorts))
}

func flowEnd(p netip.Prefix, assigned bool, ports []session.PortRange) string {
	end := "any"
	switch {
	case assigned:
		end = "assigned"
	case p.IsValid() && p.IsSingleIP():
		end = p.Addr().String()
	case p.IsValid():
		end = p.String()
	}
	var rs []string
	for _, r := range ports {
		if r.Lo == r.Hi {
			rs = append(rs, strconv.Itoa(int(r.Lo)))
		} else {
			rs = append(rs, fmt.Sprintf("%d-%d", r.Lo, r.Hi))
		}
	}
	if len(rs) > 0 {
		end += " " + strings.Join(rs, ",")
	}
	return end
}

// actionNames are the Apply Action flags (§8.2.26) in bit order.
var actionNames = []string{"DROP", "FORW", "BUFF", "NOCP", "DUPL", "IPMA", "IPMD", "DFRT", "EDRT", "BDPN", "DDPN"}

func farOf(f session.FAR) FAR {
	out := FAR{ID: f.ID, ApplyAction: flagNames(uint32(f.Action), actionNames, 0)}
	if fw := f.Forw; fw != nil {
		out.Forwarding = &Forwarding{DestinationInterface: interfaceName(fw.Dest), NetworkInstance: fw.NetworkInstance,
			TransportLevelMarking: fw.TOS, DestinationInterfaceType: interfaceTypeName(fw.InterfaceType)}
		if fw.OHC != nil {
			t := tunnelOf(fw.OHC)
			out.Forwarding.OuterHeaderCreation = &t
		}
	}
	if f.BARID != nil {
		b := *f.BARID
		out.BARID = &b
	}
	return out
}

// flagNames names the set bits of v, bit i+shift by names[i]; bits with no
// name are written "bit-N".
func flagNames(v uint32, names []string, shift int) []string {
	out := []string{}
	for bit := range 32 {
		if v&(1<<bit) == 0 {
			continue
		}
		if i := bit - shift; i >= 0 && i < len(names) && names[i] != "" {
			out = append(out, names[i])
		} else {
			out = append(out, fmt.Sprintf("bit-%d", bit))
		}
	}
	return out
}

func gate(v uint8) string {
	if v == session.GateClosed {
		return "closed"
	}
	return "open"
}

func qerOf(q session.QER) QER {
	return QER{ID: q.ID, CorrelationID: q.CorrelationID, Gate: Gates{gate(q.GateUL), gate(q.GateDL)},
		MBR: BitRates{q.MBRUL, q.MBRDL}, GBR: BitRates{q.GBRUL, q.GBRDL}, QFI: q.QFI, RQI: q.RQI}
}

// triggerNames are the Reporting Triggers (§8.2.41) as URR.Triggers holds
// them, from bit 0: octet 7, then 6, then 5.
var triggerNames = []string{
	"REEMR", "UPINT", "", "", "", "", "", "", // octet 7
	"VOLQU", "TIMQU", "ENVCL", "MACAR", "EVETH", "EVEQU", "IPMJL", "QUVTI", // octet 6
	"PERIO", "VOLTH", "TIMTH", "QUHTI", "START", "STOPT", "DROTH", "LIUSA", // octet 5
}

// methodNames are the Measurement Method flags (§8.2.40) in bit order.
var methodNames = []string{"duration", "volume", "event"}

func urrOf(u session.URR, use datapath.Usage) URR {
	return URR{ID: u.ID, MeasurementMethod: flagNames(uint32(u.Method), methodNames, 0),
		ReportingTriggers: flagNames(u.Triggers, triggerNames, 0), MeasurementPeriod: u.Period,
		VolumeThreshold: volumeOf(u.VolThreshold), VolumeQuota: volumeOf(u.VolQuota),
		TimeThreshold: u.TimeThreshold, TimeQuota: u.TimeQuota, Usage: usageOf(use)}
}

func volumeOf(v *session.Volume) *Volume {
	if v == nil {
		return nil
	}
	return &Volume{Total: v.Total, Uplink: v.Uplink, Downlink: v.Downlink}
}

func usageOf(u datapath.Usage) Usage {
	return Usage{Uplink: Traffic{u.Uplink.Packets, u.Uplink.Bytes}, Downlink: Traffic{u.Downlink.Packets, u.Downlink.Bytes}}
}

func statsOf(s datapath.Stats) Stats {
	v := s.Verdicts
	out := Stats{
		Verdicts: Verdicts{Aborted: v[datapath.Aborted], Dropped: v[datapath.Dropped], Passed: v[datapath.Passed],
			Transmitted: v[datapath.Transmitted], Redirected: v[datapath.Redirected]},
		Drops:      map[string]uint64{},
		Interfaces: map[string]InterfaceStats{},
	}
	for r, n := range s.Drops {
		out.Drops[r.String()] = n
	}
	for role, t := range s.Interfaces {
		out.Interfaces[role.String()] = InterfaceStats{Rx: Traffic{t.Rx.Packets, t.Rx.Bytes}, Tx: Traffic{t.Tx.Packets, t.Tx.Bytes}}
	}
	return out
}
