package decode

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"

	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/internal/session"
)

// Establish reads a Session Establishment Request (§7.5.2) from its IEs
// (ies, parsed from payload). The request comes back even when refused:
// its Peer is the Node ID, as the association is found by it (a Node ID
// that is missing, repeated or wrong leaves Peer empty and is the
// refusal), and its CPSEID the CP F-SEID's as far as it reads, since the
// refusal is addressed to it. An IE whose Length is wrong comes first in
// a refusal (lengthFirst).
func Establish(payload []byte, ies []*ie.IE) (*session.Establish, *session.Error) {
	var v establishment
	e := establishRequest.apply(&v, ies)
	if e == nil {
		e = v.rules()
	}
	if e != nil {
		e = lengthFirst(payload, e)
		if e.IE == ie.NodeID {
			v.req.Peer = ""
		}
	}
	return &v.req, e
}

// establishment is a Session Establishment Request as it is read: the
// request, and its rules' IEs until they are decoded.
type establishment struct {
	req                          session.Establish
	pdrs, fars, qers, urrs, bars []*ie.IE
}

var establishRequest = group[establishment]{
	name: "Session Establishment Request",
	fields: fields(
		one(ie.NodeID, func(v *establishment, k *ie.IE) (err error) { v.req.Peer, err = NodeID(k); return }),
		one(ie.FSEID, func(v *establishment, k *ie.IE) (err error) {
			v.req.CPSEID, v.req.CPAddr, err = cpFSEID(k)
			return
		}),
		many(ie.CreatePDR, collect(func(v *establishment) *[]*ie.IE { return &v.pdrs })),
		many(ie.CreateFAR, collect(func(v *establishment) *[]*ie.IE { return &v.fars })),
		many(ie.CreateQER, collect(func(v *establishment) *[]*ie.IE { return &v.qers })),
		many(ie.CreateURR, collect(func(v *establishment) *[]*ie.IE { return &v.urrs })),
		one(ie.CreateBAR, collect(func(v *establishment) *[]*ie.IE { return &v.bars })),
		one(ie.PDNType, func(v *establishment, k *ie.IE) error {
			t, err := k.PDNType()
			if err == nil && t != ie.PDNTypeIPv4 && t != ie.PDNTypeIPv6 && t != ie.PDNTypeIPv4v6 {
				return &session.Error{Cause: session.CauseServiceNotSupported, IE: ie.PDNType,
					Msg: fmt.Sprintf("PDN type %d: the UPF carries IPv4 and IPv6 PDU sessions only", t)}
			}
			v.req.Info.PDNType = t
			return err
		}),
		one(ie.UserID, func(v *establishment, k *ie.IE) (err error) { v.req.Info.UserID, err = userID(k); return }),
		one(ie.APNDNN, func(v *establishment, k *ie.IE) (err error) { v.req.Info.DNN, err = k.APNDNN(); return }),
		one(ie.SNSSAI, func(v *establishment, k *ie.IE) (err error) { v.req.Info.SNSSAI, err = snssai(k); return }),
		one(ie.PFCPSEReqFlags, func(v *establishment, k *ie.IE) error {
			// RESTI: the SMF restores a session the UPF lost (Open5GS, after
			// an unpinned restart): set up as any establishment is.
			const resti = 0x01
			fl, err := k.PFCPSEReqFlags()
			if err == nil && fl&^resti != 0 {
				return &session.Error{Cause: session.CauseServiceNotSupported, IE: ie.PFCPSEReqFlags,
					Msg: fmt.Sprintf("PFCPSEReq-Flags %#x: the UPF acts on RESTI only (not SUMPC)", fl)}
			}
			return err
		}),
	),
	mandatory: []uint16{ie.NodeID, ie.FSEID},
	refused: []uint16{ie.CreateTrafficEndpoint, ie.FQCSID, ie.UserPlaneInactivityTimer, ie.TraceInformation,
		ie.CreateMAR, ie.CreateBridgeInfoForTSC, ie.CreateSRR, ie.ProvideATSSSControlInformation,
		ie.RecoveryTimeStamp, ie.ProvideRDSConfigurationInformation},
	request: true,
}

// userID writes a User ID (§8.2.101) as the identities it holds.
func userID(k *ie.IE) (string, error) {
	f, err := fieldsOf(k, ie.ParseUserIDFields)
	if err != nil {
		return "", err
	}
	var ids []string
	for _, id := range []struct{ name, v string }{{"imsi", f.IMSI}, {"imei", f.IMEI}, {"msisdn", f.MSISDN}, {"nai", f.NAI}} {
		if id.v != "" {
			ids = append(ids, id.name+"-"+id.v)
		}
	}
	return strings.Join(ids, ","), nil
}

// snssai writes an S-NSSAI (§8.2.152): the SST, and the SD unless it is
// FFFFFF, "no SD" (TS 23.003 §28.4.2).
func snssai(k *ie.IE) (string, error) {
	b, err := k.SNSSAI()
	if err != nil {
		return "", err
	}
	if sd := b[1:4]; !bytes.Equal(sd, []byte{0xff, 0xff, 0xff}) {
		return fmt.Sprintf("%d-%x", b[0], sd), nil
	}
	return fmt.Sprint(b[0]), nil
}

// rules decodes the rules, once the request's own IEs are read.
func (v *establishment) rules() (e *session.Error) {
	r := &v.req
	if r.PDRs, e = each(v.pdrs, createPDR); e != nil {
		return e
	}
	if r.FARs, e = each(v.fars, createFAR); e != nil {
		return e
	}
	if r.QERs, e = each(v.qers, createQER); e != nil {
		return e
	}
	if r.URRs, e = each(v.urrs, createURR); e != nil {
		return e
	}
	r.BARs, e = each(v.bars, createBAR)
	return e
}

// cpFSEID reads the CP F-SEID: at least one address (§8.2.37).
func cpFSEID(k *ie.IE) (uint64, netip.Addr, error) {
	f, err := fieldsOf(k, ie.ParseFSEIDFields)
	if err != nil {
		return 0, netip.Addr{}, fmt.Errorf("CP F-SEID: %v", err)
	}
	if a, ok := netip.AddrFromSlice(f.IPv4Address.To4()); ok && f.IPv4Address != nil {
		return f.SEID, a, nil
	}
	if a, ok := netip.AddrFromSlice(f.IPv6Address.To16()); ok && f.IPv6Address != nil {
		return f.SEID, a, nil
	}
	return f.SEID, netip.Addr{}, fmt.Errorf("CP F-SEID with no address")
}

// NodeID reads a Node ID (§8.2.38): an IPv4 or IPv6 address, or an FQDN.
func NodeID(i *ie.IE) (string, error) {
	want := map[uint8]int{0: 1 + 4, 1: 1 + 16} // type octet, then the address
	if len(i.Payload) > 0 {
		if n, ok := want[i.Payload[0]&0x0f]; ok && len(i.Payload) < n {
			return "", fmt.Errorf("node ID of type %d with %d octets", i.Payload[0]&0x0f, len(i.Payload))
		}
	}
	return i.NodeID()
}

// Modify reads a Session Modification Request (§7.5.4) from its IEs, as
// Establish does, for the session its header's SEID names.
func Modify(seid uint64, payload []byte, ies []*ie.IE) (*session.Modify, *session.Error) {
	v := modification{req: session.Modify{SEID: seid}}
	e := modifyRequest.apply(&v, ies)
	if e == nil {
		e = v.rules()
	}
	if e != nil {
		return nil, lengthFirst(payload, e)
	}
	return &v.req, nil
}

// modification is a Session Modification Request as it is read.
type modification struct {
	req session.Modify
	// The rules' IEs until they are decoded, by their type's place in
	// modifyRules.
	ies [len(modifyRules)][]*ie.IE
}

// of are the IEs of type t kept.
func (v *modification) of(t uint16) []*ie.IE {
	for i, r := range modifyRules {
		if r == t {
			return v.ies[i]
		}
	}
	return nil
}

// modifyRules are the grouped IEs of rules a modification carries, each
// kept for modification.rules.
var modifyRules = [...]uint16{
	ie.CreatePDR, ie.CreateFAR, ie.CreateQER, ie.CreateURR, ie.CreateBAR,
	ie.UpdatePDR, ie.UpdateFAR, ie.UpdateQER, ie.UpdateURR,
	ie.RemovePDR, ie.RemoveFAR, ie.RemoveQER, ie.RemoveURR, ie.RemoveBAR, ie.QueryURR,
}

var modifyRequest = func() group[modification] {
	g := group[modification]{name: "Session Modification Request", request: true, fields: fields(
		one(ie.PFCPSMReqFlags, func(v *modification, k *ie.IE) error {
			fl, err := k.PFCPSMReqFlags()
			v.req.DropBuffer, v.req.QueryAll = fl&0x01 != 0, fl&0x04 != 0 // DROBU, QAURR
			return err
		}),
		one(ie.FSEID, func(v *modification, k *ie.IE) error {
			seid, addr, err := cpFSEID(k)
			v.req.CP = &session.CPFSEID{SEID: seid, Addr: addr}
			return err
		}),
	), refused: []uint16{ie.RemoveTrafficEndpoint, ie.CreateTrafficEndpoint, ie.UpdateTrafficEndpoint,
		ie.UpdateBARWithinSessionModificationRequest, ie.FQCSID, ie.UserPlaneInactivityTimer, ie.QueryURRReference,
		ie.TraceInformation, ie.RemoveMAR, ie.UpdateMAR, ie.CreateMAR, ie.NodeID,
		ie.TSCManagementInformationWithinSessionModificationRequest, ie.RemoveSRR, ie.CreateSRR, ie.UpdateSRR,
		ie.ProvideATSSSControlInformation, ie.EthernetContextInformation, ie.AccessAvailabilityInformation,
		ie.QueryPacketRateStatusWithinSessionModificationRequest, ie.SNSSAI}}
	for i, t := range modifyRules {
		keep := func(v *modification, k *ie.IE) error {
			v.ies[i] = append(v.ies[i], k)
			return nil
		}
		f := field[modification]{read: keep, repeat: several}
		if t == ie.CreateBAR || t == ie.RemoveBAR {
			f.repeat = once
		}
		g.fields[t] = f
	}
	return g
}()

// rules decodes the rules, in the order of §7.5.4's table.
func (v *modification) rules() *session.Error {
	r, ies := &v.req, v.of
	steps := []func() *session.Error{
		func() (e *session.Error) { r.CreatePDRs, e = each(ies(ie.CreatePDR), createPDR); return },
		func() (e *session.Error) { r.CreateFARs, e = each(ies(ie.CreateFAR), createFAR); return },
		func() (e *session.Error) { r.CreateQERs, e = each(ies(ie.CreateQER), createQER); return },
		func() (e *session.Error) { r.CreateURRs, e = each(ies(ie.CreateURR), createURR); return },
		func() (e *session.Error) { r.UpdatePDRs, e = each(ies(ie.UpdatePDR), updatePDR); return },
		func() (e *session.Error) { r.UpdateFARs, e = each(ies(ie.UpdateFAR), updateFAR); return },
		func() (e *session.Error) { r.UpdateQERs, e = each(ies(ie.UpdateQER), updateQER); return },
		func() (e *session.Error) { r.UpdateURRs, e = each(ies(ie.UpdateURR), updateURR); return },
		func() (e *session.Error) { r.RemovePDRs, e = each(ies(ie.RemovePDR), removePDR); return },
		func() (e *session.Error) { r.RemoveFARs, e = each(ies(ie.RemoveFAR), removeFAR); return },
		func() (e *session.Error) { r.RemoveQERs, e = each(ies(ie.RemoveQER), removeQER); return },
		func() (e *session.Error) { r.RemoveURRs, e = each(ies(ie.RemoveURR), removeURR); return },
		func() (e *session.Error) { r.QueryURRs, e = each(ies(ie.QueryURR), queryURR); return },
		func() (e *session.Error) { r.CreateBARs, e = each(ies(ie.CreateBAR), createBAR); return },
		func() (e *session.Error) { r.RemoveBARs, e = each(ies(ie.RemoveBAR), removeBAR); return },
	}
	for _, step := range steps {
		if e := step(); e != nil {
			return e
		}
	}
	return nil
}

// removal reads a Remove or Query IE: the one ID it carries.
func removal[T any](name string, t uint16, get func(*ie.IE) (T, error)) func(*ie.IE) (T, *session.Error) {
	g := &group[T]{name: name, fields: fields(one(t, func(v *T, k *ie.IE) (err error) { *v, err = get(k); return })),
		mandatory: []uint16{t}}
	return func(i *ie.IE) (T, *session.Error) { return grouped(g, i) }
}

var (
	removePDR = removal("Remove PDR", ie.PDRID, (*ie.IE).PDRID)
	removeFAR = removal("Remove FAR", ie.FARID, (*ie.IE).FARID)
	removeQER = removal("Remove QER", ie.QERID, (*ie.IE).QERID)
	removeURR = removal("Remove URR", ie.URRID, (*ie.IE).URRID)
	queryURR  = removal("Query URR", ie.URRID, (*ie.IE).URRID)
	removeBAR = removal("Remove BAR", ie.BARID, (*ie.IE).BARID)
)
