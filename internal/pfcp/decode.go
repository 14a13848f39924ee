package pfcp

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/internal/session"
)

// Decoding turns go-pfcp IEs into the session model. Wire types stop here.
// Every problem is a *session.Error with the cause and offending IE the
// response carries.

func missing(parent string, t uint16) *session.Error {
	return &session.Error{Cause: session.CauseMandatoryIEMissing, IE: t, Msg: fmt.Sprintf("%s: mandatory IE %d is missing", parent, t)}
}

func incorrect(t uint16, format string, args ...any) *session.Error {
	return &session.Error{Cause: session.CauseMandatoryIEIncorrect, IE: t, Msg: fmt.Sprintf(format, args...)}
}

func children(i *ie.IE) ([]*ie.IE, *session.Error) {
	kids, err := i.ValueAsGrouped()
	if err != nil {
		return nil, incorrect(i.Type, "grouped IE %d does not decode: %v", i.Type, err)
	}
	return kids, nil
}

// decodePDR reads a Create PDR: the fields of an Update PDR, of which
// the ID, precedence, PDI and FAR ID are mandatory.
func decodePDR(i *ie.IE) (session.PDR, *session.Error) {
	var p session.PDR
	u, e := decodeUpdatePDR(i)
	if e != nil {
		return p, e
	}
	for _, m := range []struct {
		there bool
		t     uint16
	}{{u.Precedence != nil, ie.Precedence}, {u.PDI != nil, ie.PDI}} {
		if !m.there {
			return p, missing(fmt.Sprintf("Create PDR %d", u.ID), m.t)
		}
	}
	if u.FARID == nil { // conditional in Table 7.5.2.2-1, always needed here
		return p, &session.Error{Cause: session.CauseConditionalIEMissing, IE: ie.FARID, Msg: fmt.Sprintf("Create PDR %d: no FAR ID", u.ID)}
	}
	u.ApplyTo(&p)
	return p, nil
}

func decodePDI(i *ie.IE) (session.PDI, *session.Error) {
	var pdi session.PDI
	kids, e := children(i)
	if e != nil {
		return pdi, e
	}
	haveSource := false
	for _, k := range kids {
		var err error
		switch k.Type {
		case ie.SourceInterface:
			haveSource = true
			pdi.Source, err = k.SourceInterface()
		case ie.FTEID:
			var f *session.FTEID
			if f, e = decodeFTEID(k); e != nil {
				return pdi, e
			}
			pdi.FTEID = f
		case ie.NetworkInstance:
			pdi.NetworkInstance = networkInstance(k)
		case ie.UEIPAddress:
			var u *session.UEIP
			if u, e = decodeUEIP(k); e != nil {
				return pdi, e
			}
			pdi.UEIP = u
		case ie.SDFFilter:
			var s session.SDF
			if s, e = decodeSDF(k); e != nil {
				return pdi, e
			}
			pdi.SDFs = append(pdi.SDFs, s)
		case ie.QFI:
			pdi.QFI, err = k.QFI()
		case ie.ApplicationID:
			id, _ := k.ApplicationID()
			return pdi, &session.Error{Cause: session.CauseRuleFailure, IE: ie.ApplicationID,
				Msg: fmt.Sprintf("application %q: the UPF does not detect applications", id)}
		}
		if err != nil {
			return pdi, incorrect(k.Type, "PDI: IE %d: %v", k.Type, err)
		}
	}
	if !haveSource {
		return pdi, missing("PDI", ie.SourceInterface)
	}
	return pdi, nil
}

func decodeFTEID(i *ie.IE) (*session.FTEID, *session.Error) {
	f, err := fieldsOf(i, ie.ParseFTEIDFields)
	if err != nil {
		return nil, incorrect(ie.FTEID, "F-TEID: %v", err)
	}
	out := &session.FTEID{TEID: f.TEID, ChooseID: f.ChooseID}
	const v4, v6, ch, chid = 0x01, 0x02, 0x04, 0x08
	if f.Flags&ch != 0 {
		out.Choose, out.ChooseV4, out.ChooseV6 = true, f.Flags&v4 != 0, f.Flags&v6 != 0
		out.HasChID = f.Flags&chid != 0
		return out, nil
	}
	if f.Flags&v4 != 0 {
		out.V4, _ = netip.AddrFromSlice(f.IPv4Address.To4())
	}
	if f.Flags&v6 != 0 {
		out.V6, _ = netip.AddrFromSlice(f.IPv6Address.To16())
	}
	if !out.V4.IsValid() && !out.V6.IsValid() {
		return nil, incorrect(ie.FTEID, "F-TEID with neither CHOOSE nor an address")
	}
	return out, nil
}

func decodeUEIP(i *ie.IE) (*session.UEIP, *session.Error) {
	f, err := fieldsOf(i, ie.ParseUEIPAddressFields)
	if err != nil {
		return nil, incorrect(ie.UEIPAddress, "UE IP address: %v", err)
	}
	const v6, v4, sd, chv4, chv6 = 0x01, 0x02, 0x04, 0x10, 0x20
	u := &session.UEIP{Dest: f.Flags&sd != 0, ChooseV4: f.Flags&chv4 != 0, ChooseV6: f.Flags&chv6 != 0}
	if f.Flags&v4 != 0 && !u.ChooseV4 {
		u.V4, _ = netip.AddrFromSlice(f.IPv4Address.To4())
	}
	if f.Flags&(v6|chv6) != 0 {
		bits, e := ueIPv6PrefixLength(f)
		if e != nil {
			return nil, e
		}
		if u.ChooseV6 && bits != 64 {
			return nil, &session.Error{Cause: session.CauseRuleFailure, IE: ie.UEIPAddress,
				Msg: fmt.Sprintf("UE IP address: choosing a /%d IPv6 prefix: the UPF chooses /64 prefixes only", bits)}
		}
		if !u.ChooseV6 {
			a, _ := netip.AddrFromSlice(f.IPv6Address.To16())
			u.V6 = netip.PrefixFrom(a, bits).Masked()
		}
	}
	if !u.V4.IsValid() && !u.V6.IsValid() && !u.ChooseV4 && !u.ChooseV6 {
		return nil, incorrect(ie.UEIPAddress, "UE IP address with no address and no CHOOSE")
	}
	return u, nil
}

// ueIPv6PrefixLength is the length of the UE's IPv6 prefix (§8.2.62):
// with IPv6D, /64 shortened by the IPv6 Prefix Delegation Bits (4: a
// /60); with IP6PL, the IPv6 Prefix Length itself (128: one address);
// with neither, the default /64. A zero in either field leaves the length
// to the UP function (§5.14), which takes the default.
func ueIPv6PrefixLength(f *ie.UEIPAddressFields) (int, *session.Error) {
	const ipv6d, ip6pl = 0x08, 0x40
	switch {
	case f.Flags&ipv6d != 0 && f.Flags&ip6pl != 0:
		return 0, incorrect(ie.UEIPAddress, "UE IP address with both IPv6D and IP6PL: IP6PL applies only without IPv6D")
	case f.Flags&ipv6d != 0 && f.IPv6PrefixDelegationBits > 63:
		return 0, incorrect(ie.UEIPAddress, "UE IP address: %d IPv6 prefix delegation bits leave no /64 to shorten", f.IPv6PrefixDelegationBits)
	case f.Flags&ipv6d != 0:
		return 64 - int(f.IPv6PrefixDelegationBits), nil
	case f.Flags&ip6pl != 0 && f.IPv6PrefixLength > 128:
		return 0, incorrect(ie.UEIPAddress, "UE IP address: IPv6 prefix length %d is longer than an address", f.IPv6PrefixLength)
	case f.Flags&ip6pl != 0 && f.IPv6PrefixLength > 0:
		return int(f.IPv6PrefixLength), nil
	}
	return 64, nil
}

func decodeSDF(i *ie.IE) (session.SDF, *session.Error) {
	var s session.SDF
	f, err := fieldsOf(i, ie.ParseSDFFilterFields)
	if err != nil {
		return s, incorrect(ie.SDFFilter, "SDF filter: %v", err)
	}
	const fd, ttc, spi, fl = 0x01, 0x02, 0x04, 0x08
	if f.Flags&spi != 0 {
		return s, &session.Error{Cause: session.CauseRuleFailure, IE: ie.SDFFilter, Msg: "SDF filter on an IPsec SPI is not supported"}
	}
	if f.Flags&fd != 0 {
		flow, err := session.ParseFlow(f.FlowDescription)
		if err != nil {
			return s, incorrect(ie.SDFFilter, "%v", err)
		}
		s.Flow = flow
	}
	if f.Flags&ttc != 0 && len(f.ToSTrafficClass) == 2 {
		s.TOS, s.TOSMask = f.ToSTrafficClass[0], f.ToSTrafficClass[1]
		s.TOS &= s.TOSMask
	}
	if f.Flags&fl != 0 && len(f.FlowLabel) == 3 {
		b := []byte(f.FlowLabel)
		s.FlowLabel, s.HasLabel = uint32(b[0]&0x0f)<<16|uint32(b[1])<<8|uint32(b[2]), true
	}
	s.FilterID = f.SDFFilterID
	return s, nil
}

// decodeFAR reads a Create FAR: the fields of an Update FAR, with the
// apply action mandatory and, in forwarding parameters, the destination.
func decodeFAR(i *ie.IE) (session.FAR, *session.Error) {
	var f session.FAR
	u, e := decodeUpdateFAR(i)
	if e != nil {
		return f, e
	}
	if u.Action == nil {
		return f, missing(fmt.Sprintf("Create FAR %d", u.ID), ie.ApplyAction)
	}
	if u.Forw != nil && u.Forw.Dest == nil {
		return f, missing("Forwarding Parameters", ie.DestinationInterface)
	}
	u.ApplyTo(&f)
	return f, nil
}

// applyAction reads the 1- or 2-octet Apply Action (§8.2.26).
func applyAction(k *ie.IE) (uint16, error) {
	b, err := k.ApplyAction()
	if err != nil || len(b) == 0 {
		return 0, fmt.Errorf("apply action: %v", err)
	}
	v := uint16(b[0])
	if len(b) > 1 {
		v |= uint16(b[1]) << 8
	}
	return v, nil
}

// decodeForwardingUpdate reads (Update) Forwarding Parameters: only what
// is there is set.
func decodeForwardingUpdate(i *ie.IE) (*session.ForwardingUpdate, *session.Error) {
	u := &session.ForwardingUpdate{}
	kids, e := children(i)
	if e != nil {
		return nil, e
	}
	for _, k := range kids {
		var err error
		switch k.Type {
		case ie.DestinationInterface:
			var d uint8
			d, err = k.DestinationInterface()
			u.Dest = &d
		case ie.NetworkInstance:
			var n string
			n = networkInstance(k)
			u.NetworkInstance = &n
		case ie.OuterHeaderCreation:
			if u.OHC, e = decodeOHC(k); e != nil {
				return nil, e
			}
		case ie.TransportLevelMarking:
			var t uint16
			t, err = k.TransportLevelMarking()
			tos := uint8(t >> 8)
			u.TOS = &tos
		case ie.PFCPSMReqFlags:
			var fl uint8
			fl, err = k.PFCPSMReqFlags()
			u.EndMarker = fl&0x02 != 0 // SNDEM
		case ie.ForwardingPolicy, ie.HeaderEnrichment, ie.RedirectInformation:
			return nil, &session.Error{Cause: session.CauseRuleFailure, IE: k.Type, Msg: fmt.Sprintf("forwarding parameter IE %d is not supported", k.Type)}
		}
		if err != nil {
			return nil, incorrect(k.Type, "forwarding parameters: IE %d: %v", k.Type, err)
		}
	}
	return u, nil
}

func decodeOHC(i *ie.IE) (*session.OHC, *session.Error) {
	o, err := fieldsOf(i, ie.ParseOuterHeaderCreationFields)
	if err != nil {
		return nil, incorrect(ie.OuterHeaderCreation, "outer header creation: %v", err)
	}
	const gtpuV4, gtpuV6 = 0x0100, 0x0200
	out := &session.OHC{TEID: o.TEID, Port: o.PortNumber}
	switch {
	case o.OuterHeaderCreationDescription&gtpuV4 != 0:
		out.Peer, _ = netip.AddrFromSlice(o.IPv4Address.To4())
	case o.OuterHeaderCreationDescription&gtpuV6 != 0:
		out.Peer, _ = netip.AddrFromSlice(o.IPv6Address.To16())
	default:
		return nil, &session.Error{Cause: session.CauseRuleFailure, IE: ie.OuterHeaderCreation,
			Msg: fmt.Sprintf("outer header creation %#04x: only GTP-U/UDP/IPv4 and GTP-U/UDP/IPv6 are supported", o.OuterHeaderCreationDescription)}
	}
	if !out.Peer.IsValid() {
		return nil, incorrect(ie.OuterHeaderCreation, "outer header creation without the peer's address")
	}
	return out, nil
}

// decodeQER reads a Create QER: its fields, with the gate mandatory.
func decodeQER(i *ie.IE) (session.QER, *session.Error) {
	u, e := decodeQERFields(i)
	if e != nil {
		return session.QER{}, e
	}
	if u.GateUL == nil {
		return session.QER{}, missing(fmt.Sprintf("Create QER %d", u.ID), ie.GateStatus)
	}
	var q session.QER
	u.ApplyTo(&q)
	return q, nil
}

// bitRates reads an MBR or GBR: kbit/s on the wire (§8.2.8), bit/s here.
func bitRates(ul, dl func() (uint64, error)) (uint64, uint64, error) {
	u, err := ul()
	if err != nil {
		return 0, 0, err
	}
	d, err := dl()
	return u * 1000, d * 1000, err
}

// decodeURR reads a Create URR: its fields, with the measurement method
// and reporting triggers mandatory.
func decodeURR(i *ie.IE) (session.URR, *session.Error) {
	f, e := decodeURRFields(i)
	if e != nil {
		return session.URR{}, e
	}
	u := session.URR{MBQE: f.mbqe}
	switch {
	case f.Method == nil:
		return u, missing(fmt.Sprintf("Create URR %d", f.ID), ie.MeasurementMethod)
	case f.Triggers == nil:
		return u, missing(fmt.Sprintf("Create URR %d", f.ID), ie.ReportingTriggers)
	}
	f.ApplyTo(&u)
	return u, nil
}

type urrFields struct {
	session.URRUpdate
	mbqe bool
}

// decodeURRFields reads the fields of a Create or Update URR that are there.
func decodeURRFields(i *ie.IE) (urrFields, *session.Error) {
	var u urrFields
	kids, e := children(i)
	if e != nil {
		return u, e
	}
	haveID := false
	for _, k := range kids {
		var err error
		switch k.Type {
		case ie.URRID:
			haveID = true
			u.ID, err = k.URRID()
		case ie.MeasurementMethod:
			var m uint8
			m, err = k.MeasurementMethod()
			u.Method = &m
		case ie.ReportingTriggers:
			var b []byte
			if b, err = k.ReportingTriggers(); err == nil {
				t := triggers(b)
				u.Triggers = &t
			}
		case ie.MeasurementPeriod:
			u.Period, err = seconds(k.MeasurementPeriod)
		case ie.VolumeThreshold:
			var f *ie.VolumeThresholdFields
			if f, err = k.VolumeThreshold(); err == nil {
				u.VolThreshold = volume(f.Flags, f.TotalVolume, f.UplinkVolume, f.DownlinkVolume)
			}
		case ie.VolumeQuota:
			var f *ie.VolumeQuotaFields
			if f, err = k.VolumeQuota(); err == nil {
				u.VolQuota = volume(f.Flags, f.TotalVolume, f.UplinkVolume, f.DownlinkVolume)
			}
		case ie.TimeThreshold:
			u.TimeThreshold, err = seconds(k.TimeThreshold)
		case ie.TimeQuota:
			u.TimeQuota, err = seconds(k.TimeQuota)
		case ie.MeasurementInformation:
			u.mbqe = len(k.Payload) > 0 && k.Payload[0]&0x01 != 0
		}
		if err != nil {
			return u, incorrect(k.Type, "URR: IE %d: %v", k.Type, err)
		}
	}
	if !haveID {
		return u, missing("URR", ie.URRID)
	}
	return u, nil
}

func seconds(get func() (time.Duration, error)) (*uint32, error) {
	d, err := get()
	if err != nil {
		return nil, err
	}
	s := uint32(d.Seconds())
	return &s, nil
}

// triggers packs the Reporting Triggers octets (§8.2.41), first octet
// highest, into one number.
func triggers(b []byte) uint32 {
	var v uint32
	for _, o := range b[:min(len(b), 3)] {
		v = v<<8 | uint32(o)
	}
	return v << (8 * (3 - min(len(b), 3)))
}

// volume reads the TOVOL/ULVOL/DLVOL fields that the flags say are there.
func volume(flags uint8, total, ul, dl uint64) *session.Volume {
	v := &session.Volume{}
	if flags&0x01 != 0 {
		v.Total = &total
	}
	if flags&0x02 != 0 {
		v.Uplink = &ul
	}
	if flags&0x04 != 0 {
		v.Downlink = &dl
	}
	return v
}

func decodeBAR(i *ie.IE) (session.BAR, *session.Error) {
	var b session.BAR
	kids, e := children(i)
	if e != nil {
		return b, e
	}
	haveID := false
	for _, k := range kids {
		var err error
		switch k.Type {
		case ie.BARID:
			haveID = true
			b.ID, err = k.BARID()
		case ie.SuggestedBufferingPacketsCount:
			var n uint8
			n, err = k.SuggestedBufferingPacketsCount()
			b.SuggestedPackets = uint32(n)
		}
		if err != nil {
			return b, incorrect(k.Type, "BAR: IE %d: %v", k.Type, err)
		}
	}
	if !haveID {
		return b, missing("Create BAR", ie.BARID)
	}
	return b, nil
}

// networkInstance reads a Network Instance (§8.2.4): an APN/DNN in DNS
// label form ("\x08internet", as Open5GS and scapy send it) or a plain
// string (as free5GC does). Labels are taken only when they cover the
// value exactly, each 1 to 63 printable octets.
func networkInstance(k *ie.IE) string {
	b := k.Payload
	var labels []string
	for len(b) > 0 {
		n := int(b[0])
		if n == 0 || n > 63 || n >= len(b) || !printable(b[1:1+n]) {
			return string(k.Payload)
		}
		labels, b = append(labels, string(b[1:1+n])), b[1+n:]
	}
	return strings.Join(labels, ".")
}

func printable(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}
