package rules

import (
	"fmt"
	"net/netip"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// addPDR adds p's datapath PDRs under each lookup key it matches: its local
// F-TEID (one per address) or, without one, its UE address(es).
func (c *Compiler) addPDR(img, prev *image, again *replay, p session.PDR, lk *lookups) error {
	base, err := c.pdrBase(img, p)
	if err != nil {
		return err
	}
	c.filters, err = pdrFilters(c.filters[:0], p)
	if err != nil {
		return err
	}
	entries := c.entries[:0]
	for _, f := range c.filters {
		e := base
		e.Filter = f
		if f.NeedsSlot() {
			if e.SDFID, err = c.sdfSlot(img, prev, again, uint32(p.ID), f); err != nil {
				return err
			}
		}
		entries = append(entries, e)
	}
	c.entries = entries
	if f := p.PDI.FTEID; f != nil {
		for _, a := range [...]netip.Addr{f.V4, f.V6} {
			for ep, local := range c.ifaces.Endpoints {
				if a.IsValid() && a == local {
					rank(&lk.uplink, datapath.UplinkKey{TEID: f.TEID, Endpoint: uint32(ep)}, p.Precedence, entries)
				}
			}
		}
		return nil
	}
	if u := p.PDI.UEIP; u != nil {
		if u.V4.IsValid() {
			rank(&lk.downlink, netip.PrefixFrom(u.V4, 32), p.Precedence, entries)
		}
		if u.V6.IsValid() {
			rank(&lk.downlink, u.V6.Masked(), p.Precedence, entries)
		}
	}
	return nil
}

// rank adds entries, of a PDR with precedence, under key.
func rank[K comparable](t *table[K, []rankedPDR], key K, precedence uint32, entries []datapath.PDR) {
	list := t.at(key)
	for _, e := range entries {
		list = append(list, rankedPDR{precedence, e})
	}
	t.set(key, list)
}

// pdrBase is the datapath PDR without its filter.
func (c *Compiler) pdrBase(img *image, p session.PDR) (datapath.PDR, error) {
	e := datapath.PDR{ID: p.ID, Src: datapath.SrcIface(p.PDI.Source), QFI: p.PDI.QFI, FARID: img.FARs.at(p.FARID).Slot}
	if p.OHR != nil {
		e.OHR = map[uint8]datapath.OHR{0: datapath.OHRGTPUv4, 1: datapath.OHRGTPUv6, 6: datapath.OHRGTPUIP}[*p.OHR]
	}
	if len(p.QERIDs) > len(e.QERIDs) {
		return e, &session.Error{Cause: session.CauseRuleFailure, IE: session.IEQERID,
			Msg: fmt.Sprintf("PDR %d has %d QERs: the datapath applies at most %d", p.ID, len(p.QERIDs), len(e.QERIDs))}
	}
	for i, q := range p.QERIDs {
		e.QERIDs[i] = img.QERs.at(q).Slot
	}
	if len(p.URRIDs) > len(e.URRIDs) {
		return e, &session.Error{Cause: session.CauseRuleFailure, IE: session.IEURRID,
			Msg: fmt.Sprintf("PDR %d has %d URRs: the datapath counts at most %d", p.ID, len(p.URRIDs), len(e.URRIDs))}
	}
	for i, u := range p.URRIDs {
		e.URRIDs[i] = img.URRs.at(u).Slot
	}
	return e, nil
}

// pdrFilters turns the PDI's SDF filters (and, for an uplink PDR, its UE
// address as the source) into datapath filters: one per filter, port
// range and UE address family, appended to out. Flow descriptions are
// written for downlink (from the remote to the UE); for uplink they are
// mirrored.
func pdrFilters(out []datapath.SDF, p session.PDR) ([]datapath.SDF, error) {
	uplink := p.PDI.Source == session.Access
	var ue [2]netip.Prefix // the UE's addresses as the source, uplink
	if u := p.PDI.UEIP; u != nil && uplink && !u.Dest {
		if u.V4.IsValid() {
			ue[0] = netip.PrefixFrom(u.V4, 32)
		}
		if u.V6.IsValid() {
			ue[1] = u.V6.Masked()
		}
	}
	sdfs := p.PDI.SDFs
	if len(sdfs) == 0 {
		sdfs = anySDF
	}
	n := len(out)
	for _, sdf := range sdfs {
		flows := len(out)
		out = appendFlowFilters(out, sdf, uplink)
		if ue[0].IsValid() || ue[1].IsValid() {
			out = fromUE(out, flows, ue)
		}
	}
	if len(out) == n {
		return nil, &session.Error{Cause: session.CauseRuleFailure, IE: session.IESDFFilter,
			Msg: fmt.Sprintf("PDR %d: its SDF filters can never match its UE address", p.ID)}
	}
	return out, nil
}

// fromUE replaces the filters out[from:] by each of them from each UE
// address it can match: none for a flow of another address or family.
func fromUE(out []datapath.SDF, from int, ue [2]netip.Prefix) []datapath.SDF {
	end := len(out)
	for _, f := range out[from:end] {
		for _, u := range ue {
			if !u.IsValid() || f.Src.IsValid() && f.Src != u || f.Dst.IsValid() && f.Dst.Addr().Is4() != u.Addr().Is4() {
				continue
			}
			g := f // f stays as the flow gave it, for the next address
			g.Src = u
			out = append(out, g)
		}
	}
	return append(out[:from], out[end:]...)
}

// appendFlowFilters appends one SDF filter as datapath filters, one per
// pair of port ranges, with the packet's source and destination as the
// direction sees them.
func appendFlowFilters(out []datapath.SDF, sdf session.SDF, uplink bool) []datapath.SDF {
	base := datapath.SDF{TOS: sdf.TOS, TOSMask: sdf.TOSMask, FlowLabel: sdf.FlowLabel, MatchFlow: sdf.HasLabel}
	fl := sdf.Flow
	if fl == nil {
		return append(out, base)
	}
	base.Proto = fl.Proto
	remote, remotePorts := fl.Src, fl.SrcPorts
	local, localPorts := fl.Dst, fl.DstPorts
	if fl.DstAssigned {
		local = netip.Prefix{} // the UE's address, added by the caller for uplink
	}
	for _, rp := range portsOrAny(remotePorts) {
		for _, lp := range portsOrAny(localPorts) {
			f := base
			r, l := portRange(fl.Proto, rp), portRange(fl.Proto, lp)
			if uplink {
				f.Src, f.Dst, f.SrcPorts, f.DstPorts = local, remote, l, r
			} else {
				f.Src, f.Dst, f.SrcPorts, f.DstPorts = remote, local, r, l
			}
			out = append(out, f)
		}
	}
	return out
}

// portRange is a flow's port range in the datapath. A packet without
// ports (ICMP, ...) shows port 0 there, so the ports of "ip" (any
// protocol) start at 1: they are TCP's, UDP's and SCTP's only.
func portRange(proto uint8, p session.PortRange) datapath.PortRange {
	if proto == 0 && p.Lo == 0 && p.Hi > 0 {
		p.Lo = 1
	}
	return datapath.PortRange(p)
}

// anySDF is a PDI without SDF filters: it matches every packet.
var anySDF = []session.SDF{{}}

// anyPort is a flow without port ranges: the zero range is any port.
var anyPort = []session.PortRange{{}}

func portsOrAny(p []session.PortRange) []session.PortRange {
	if len(p) == 0 {
		return anyPort
	}
	return p
}

// sdfSlot is the slot of filter f of PDR pdr: the one the image gave the
// same filter already, else as slotFor.
func (c *Compiler) sdfSlot(img, prev *image, again *replay, pdr uint32, f datapath.SDF) (uint32, error) {
	if slot, ok := img.SDFs.get(f); ok {
		return uint32(slot), nil
	}
	old, had := prev.SDFs.get(f)
	id, err := slotFor(again, uint32(old), had, c.sdfSlots, "PDR", pdr, session.IESDFFilter)
	if err != nil {
		return 0, err
	}
	img.SDFs.set(f, sdfSlot(id))
	return id, nil
}
