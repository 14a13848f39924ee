package rules

import (
	"fmt"
	"net/netip"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// addPDR adds p's datapath PDRs under each lookup key it matches: its local
// F-TEID (one per address) or, without one, its UE address(es).
func (c *Compiler) addPDR(img, prev *image, p session.PDR, ranked *table[any, []rankedPDR]) error {
	base, err := c.pdrBase(img, p)
	if err != nil {
		return err
	}
	filters, err := pdrFilters(p)
	if err != nil {
		return err
	}
	var entries []datapath.PDR
	for _, f := range filters {
		e := base
		e.Filter = f
		if f.NeedsSlot() {
			if e.SDFID, err = c.sdfSlot(img, prev, f); err != nil {
				return err
			}
		}
		entries = append(entries, e)
	}
	for _, key := range c.keys(p) {
		list := ranked.at(key)
		for _, e := range entries {
			list = append(list, rankedPDR{p.Precedence, e})
		}
		ranked.set(key, list)
	}
	return nil
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

// keys are where the PDR is looked up.
func (c *Compiler) keys(p session.PDR) []any {
	var keys []any
	if f := p.PDI.FTEID; f != nil {
		for _, a := range []netip.Addr{f.V4, f.V6} {
			for ep, local := range c.ifaces.Endpoints {
				if a.IsValid() && a == local {
					keys = append(keys, datapath.UplinkKey{TEID: f.TEID, Endpoint: uint32(ep)})
				}
			}
		}
		return keys
	}
	if u := p.PDI.UEIP; u != nil {
		if u.V4.IsValid() {
			keys = append(keys, netip.PrefixFrom(u.V4, 32))
		}
		if u.V6.IsValid() {
			keys = append(keys, u.V6.Masked())
		}
	}
	return keys
}

// pdrFilters turns the PDI's SDF filters (and, for an uplink PDR, its UE
// address as the source) into datapath filters: one per filter, port
// range and UE address family. Flow descriptions are written for downlink
// (from the remote to the UE); for uplink they are mirrored.
func pdrFilters(p session.PDR) ([]datapath.SDF, error) {
	uplink := p.PDI.Source == session.Access
	var ue []netip.Prefix
	if u := p.PDI.UEIP; u != nil && uplink && !u.Dest {
		if u.V4.IsValid() {
			ue = append(ue, netip.PrefixFrom(u.V4, 32))
		}
		if u.V6.IsValid() {
			ue = append(ue, u.V6.Masked())
		}
	}
	sdfs := p.PDI.SDFs
	if len(sdfs) == 0 {
		sdfs = []session.SDF{{}}
	}
	var out []datapath.SDF
	for _, sdf := range sdfs {
		for _, f := range flowFilters(sdf, uplink) {
			if len(ue) == 0 {
				out = append(out, f)
				continue
			}
			for _, u := range ue {
				g := f
				if g.Src.IsValid() && g.Src != u {
					continue // a flow for another address than the UE's
				}
				if g.Dst.IsValid() && g.Dst.Addr().Is4() != u.Addr().Is4() {
					continue
				}
				g.Src = u
				out = append(out, g)
			}
		}
	}
	if len(out) == 0 {
		return nil, &session.Error{Cause: session.CauseRuleFailure, IE: session.IESDFFilter,
			Msg: fmt.Sprintf("PDR %d: its SDF filters can never match its UE address", p.ID)}
	}
	return out, nil
}

// flowFilters is one SDF filter as datapath filters, one per pair of port
// ranges, with the packet's source and destination as the direction sees them.
func flowFilters(sdf session.SDF, uplink bool) []datapath.SDF {
	base := datapath.SDF{TOS: sdf.TOS, TOSMask: sdf.TOSMask, FlowLabel: sdf.FlowLabel, MatchFlow: sdf.HasLabel}
	fl := sdf.Flow
	if fl == nil {
		return []datapath.SDF{base}
	}
	base.Proto = fl.Proto
	remote, remotePorts := fl.Src, fl.SrcPorts
	local, localPorts := fl.Dst, fl.DstPorts
	if fl.DstAssigned {
		local = netip.Prefix{} // the UE's address, added by the caller for uplink
	}
	var out []datapath.SDF
	for _, rp := range portsOrAny(remotePorts) {
		for _, lp := range portsOrAny(localPorts) {
			f := base
			if uplink {
				f.Src, f.Dst, f.SrcPorts, f.DstPorts = local, remote, lp, rp
			} else {
				f.Src, f.Dst, f.SrcPorts, f.DstPorts = remote, local, rp, lp
			}
			out = append(out, f)
		}
	}
	return out
}

func portsOrAny(p []session.PortRange) []datapath.PortRange {
	if len(p) == 0 {
		return []datapath.PortRange{{}}
	}
	out := make([]datapath.PortRange, len(p))
	for i, r := range p {
		out[i] = datapath.PortRange{Lo: r.Lo, Hi: r.Hi}
	}
	return out
}

func (c *Compiler) sdfSlot(img, prev *image, f datapath.SDF) (uint32, error) {
	if slot, ok := img.SDFs.get(f); ok {
		return uint32(slot), nil
	}
	slot, ok := prev.SDFs.get(f)
	if !ok {
		id, ok := c.sdfSlots.get()
		if !ok {
			return 0, &session.Error{Cause: session.CauseNoResources, IE: session.IESDFFilter, Msg: "the datapath's SDF table is full"}
		}
		slot = sdfSlot(id)
	}
	img.SDFs.set(f, slot)
	return uint32(slot), nil
}
