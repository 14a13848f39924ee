package decode

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/internal/session"
)

// pdrFields are the IEs of a Create or Update PDR (§7.5.2.2, §7.5.4.2).
var pdrFields = fields(
	one(ie.PDRID, func(u *session.PDRUpdate, k *ie.IE) (err error) { u.ID, err = k.PDRID(); return }),
	one(ie.Precedence, func(u *session.PDRUpdate, k *ie.IE) error {
		p, err := k.Precedence()
		u.Precedence = &p
		return err
	}),
	one(ie.PDI, func(u *session.PDRUpdate, k *ie.IE) error {
		pdi, e := grouped(&pdiGroup, k)
		if e != nil {
			return e
		}
		u.PDI = &pdi
		return nil
	}),
	one(ie.OuterHeaderRemoval, func(u *session.PDRUpdate, k *ie.IE) error {
		b, err := k.OuterHeaderRemoval()
		if err == nil && len(b) > 0 {
			ohr := b[0] // a copy: a pointer into b would keep the datagram alive
			u.OHR = &ohr
		}
		return err
	}),
	one(ie.FARID, func(u *session.PDRUpdate, k *ie.IE) error {
		id, err := k.FARID()
		u.FARID = &id
		return err
	}),
	many(ie.QERID, func(u *session.PDRUpdate, k *ie.IE) error {
		id, err := k.QERID()
		u.QERIDs, u.SetQERs = append(u.QERIDs, id), true
		return err
	}),
	many(ie.URRID, func(u *session.PDRUpdate, k *ie.IE) error {
		id, err := k.URRID()
		u.URRIDs, u.SetURRs = append(u.URRIDs, id), true
		return err
	}),
)

// pdrRefused are the IEs of a Create PDR the UPF does not act on.
var pdrRefused = []uint16{ie.ActivatePredefinedRules, ie.ActivationTime, ie.DeactivationTime, ie.MARID,
	ie.PacketReplicationAndDetectionCarryOnInformation, ie.IPMulticastAddressingInfo, ie.UEIPAddressPoolIdentity,
	ie.MPTCPApplicableIndication, ie.TransportDelayReporting}

var (
	createPDRGroup = group[session.PDRUpdate]{name: "Create PDR", fields: pdrFields,
		mandatory: []uint16{ie.PDRID, ie.Precedence, ie.PDI}, refused: pdrRefused}
	updatePDRGroup = group[session.PDRUpdate]{name: "Update PDR", fields: pdrFields, mandatory: []uint16{ie.PDRID},
		refused: append([]uint16{ie.DeactivatePredefinedRules}, pdrRefused...)}
)

// createPDR reads a Create PDR: the fields of an Update PDR, of which the
// ID, precedence and PDI are mandatory, and the FAR ID needed.
func createPDR(i *ie.IE) (session.PDR, *session.Error) {
	var p session.PDR
	u, e := grouped(&createPDRGroup, i)
	if e != nil {
		return p, e
	}
	if u.FARID == nil { // conditional in Table 7.5.2.2-1, always needed here
		return p, &session.Error{Cause: session.CauseConditionalIEMissing, IE: ie.FARID, Msg: fmt.Sprintf("Create PDR %d: no FAR ID", u.ID)}
	}
	u.ApplyTo(&p)
	return p, nil
}

func updatePDR(i *ie.IE) (session.PDRUpdate, *session.Error) { return grouped(&updatePDRGroup, i) }

// pdiGroup is a PDI (§7.5.2.2-2).
var pdiGroup = group[session.PDI]{
	name: "PDI",
	fields: fields(
		one(ie.SourceInterface, func(p *session.PDI, k *ie.IE) (err error) { p.Source, err = k.SourceInterface(); return }),
		one(ie.FTEID, func(p *session.PDI, k *ie.IE) (err error) { p.FTEID, err = fteid(k); return }),
		one(ie.NetworkInstance, func(p *session.PDI, k *ie.IE) error { p.NetworkInstance = networkInstance(k); return nil }),
		first(ie.UEIPAddress, func(p *session.PDI, k *ie.IE) (err error) { p.UEIP, err = ueIP(k); return }),
		many(ie.SDFFilter, func(p *session.PDI, k *ie.IE) error {
			s, err := sdfFilter(k)
			p.SDFs = append(p.SDFs, s)
			return err
		}),
		first(ie.QFI, func(p *session.PDI, k *ie.IE) (err error) { p.QFI, err = k.QFI(); return }),
		one(ie.TGPPInterfaceType, func(p *session.PDI, k *ie.IE) (err error) { p.InterfaceType, err = interfaceType(k); return }),
		one(ie.ApplicationID, func(p *session.PDI, k *ie.IE) error {
			id, _ := k.ApplicationID()
			return unsupported(ie.ApplicationID, "application %q: the UPF does not detect applications", id)
		}),
	),
	mandatory: []uint16{ie.SourceInterface},
	refused: []uint16{ie.TrafficEndpointID, ie.RedundantTransmissionParameters, ie.EthernetPDUSessionInformation,
		ie.EthernetPacketFilter, ie.FramedRoute, ie.FramedRouting, ie.FramedIPv6Route, ie.IPMulticastAddressingInfo},
}

// interfaceType reads a 3GPP Interface Type (§8.2.118): kept with the
// rule it describes, for the operator to see.
func interfaceType(k *ie.IE) (*uint8, error) {
	t, err := k.TGPPInterfaceType()
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func fteid(i *ie.IE) (*session.FTEID, error) {
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

func ueIP(i *ie.IE) (*session.UEIP, error) {
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
			return nil, unsupported(ie.UEIPAddress, "UE IP address: choosing a /%d IPv6 prefix: the UPF chooses /64 prefixes only", bits)
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

func sdfFilter(i *ie.IE) (session.SDF, error) {
	var s session.SDF
	f, err := fieldsOf(i, ie.ParseSDFFilterFields)
	if err != nil {
		return s, incorrect(ie.SDFFilter, "SDF filter: %v", err)
	}
	const fd, ttc, spi, fl, bid = 0x01, 0x02, 0x04, 0x08, 0x10
	if f.Flags&spi != 0 {
		return s, unsupported(ie.SDFFilter, "SDF filter on an IPsec SPI is not supported")
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
	if f.Flags&bid != 0 {
		s.FilterID, s.HasID, s.Ref = f.SDFFilterID, true, f.Flags&(fd|ttc|fl) == 0
	}
	return s, nil
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
