// Package rules compiles sessions into the datapath's entries and plans
// the operations that take the datapath from one version of a session to
// the next, make-before-break. It owns the datapath's slot numbers.
package rules

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/gtpu"
	"github.com/sluice-upf/sluice/internal/session"
)

// Interfaces are the UPF's GTP-U addresses as the compiler needs them.
type Interfaces struct {
	// Endpoints are the datapath's local GTP-U addresses, in the order
	// given to datapath.Options.GTPUAddrs: the index is the endpoint ID.
	Endpoints []netip.Addr
	// Outer source addresses toward each destination interface.
	Access, Core []netip.Addr
}

func (i Interfaces) gtpu() gtpu.Addrs { return gtpu.Addrs{Access: i.Access, Core: i.Core} }

// kept is what the compiler keeps of an installed session: the session
// itself (the store's, immutable) and the slots its rules hold. Neither
// the rules' values nor the lookup entries are kept: compiling the
// session again into the same slots gives them back (full). At a million
// sessions that keeps the compiler to some 60 bytes a session.
type kept struct {
	// Slots are the FAR, QER and URR slots, each kind in rule ID order,
	// then the SDF slots in the order compile meets the filters.
	Slots []uint32
	from  *session.Session
}

// image is a session compiled: the slots its rules hold with their
// values, and its lookup entries.
type image struct {
	Session  uint32
	FARs     table[uint32, farSlot] // by FAR ID
	QERs     table[uint32, qerSlot]
	URRs     table[uint32, urrSlot]
	SDFs     table[datapath.SDF, sdfSlot] // filter -> slot, in the order met
	Uplink   table[datapath.UplinkKey, datapath.Rules]
	Downlink table[netip.Prefix, datapath.Rules]
	from     *session.Session
}

// kept is what Commit keeps of the image.
func (img *image) kept() kept {
	slots := make([]uint32, 0, len(img.FARs)+len(img.QERs)+len(img.URRs)+len(img.SDFs))
	slots = slotIDs(slots, img.FARs)
	slots = slotIDs(slots, img.QERs)
	slots = slotIDs(slots, img.URRs)
	slots = slotIDs(slots, img.SDFs)
	return kept{slots, img.from}
}

// slotsOf splits k.Slots by kind, by the session's rule counts.
func (k kept) slotsOf() (fars, qers, urrs, sdfs []uint32, ok bool) {
	f, q, u := k.from.FARs.Len(), k.from.QERs.Len(), k.from.URRs.Len()
	if len(k.Slots) < f+q+u {
		return nil, nil, nil, nil, false
	}
	s := k.Slots
	return s[:f], s[f : f+q], s[f+q : f+q+u], s[f+q+u:], true
}

// full is the image of what k installed: the session compiled again, each
// rule into the slot it holds. It compiled once into these very slots, so
// it fails only if k is not what Commit kept (a restored state that lies).
func (c *Compiler) full(k kept) (*image, error) {
	again := &replay{slots: k.Slots}
	img, err := c.compile(k.from, empty, again)
	if err == nil && len(again.slots) > 0 {
		err = fmt.Errorf("%d slots kept beyond its rules", len(again.slots))
	}
	if err != nil {
		return nil, fmt.Errorf("session %#x does not compile into the slots it holds: %w", k.from.SEID, err)
	}
	return img, nil
}

// replay hands compile the slots a session holds, in the order it takes
// them, instead of taking any.
type replay struct{ slots []uint32 }

func (r *replay) next(kind string, id uint32) (uint32, error) {
	if len(r.slots) == 0 {
		return 0, fmt.Errorf("%s %d: no slot kept for it", kind, id)
	}
	s := r.slots[0]
	r.slots = r.slots[1:]
	return s, nil
}

// slotFor is the slot of a rule whose value in prev sat in old: the next
// one replayed, old if the value is the same, else a new one from pool.
// Errors name the rule (kind and id) and the IE that made it.
func slotFor(again *replay, old uint32, same bool, pool *slots, kind string, id uint32, ie uint16) (uint32, error) {
	switch {
	case again != nil:
		return again.next(kind, id)
	case same:
		return old, nil
	}
	n, ok := pool.get()
	if !ok {
		return 0, &session.Error{Cause: session.CauseNoResources, IE: ie, Msg: fmt.Sprintf("%s %d: the datapath's %s table is full", kind, id, pool.name)}
	}
	return n, nil
}

type sdfSlot uint32

type farSlot struct {
	Slot uint32
	FAR  datapath.FAR
}

type qerSlot struct {
	Slot uint32
	QER  datapath.QER
}

type urrSlot struct {
	Slot uint32
	URR  datapath.URR
	// Grant is the URR's quota grant: a new one, even of the same size,
	// is written again and starts the count over.
	Grant uint32
	// Spent: the time quota ran out, so the datapath lets nothing
	// through the URR until a new grant.
	Spent bool
}

// compile builds the image of s, taking slots from prev where the value is
// the same (and for every URR that stays) and new ones otherwise; or,
// with again, the slots s holds. Lists for multi-PDR entries get their
// slots later, in plan.
func (c *Compiler) compile(s *session.Session, prev *image, again *replay) (*image, error) {
	img := &image{
		from:    s,
		Session: uint32(s.SEID),
		FARs:    make(table[uint32, farSlot], 0, s.FARs.Len()),
		QERs:    make(table[uint32, qerSlot], 0, s.QERs.Len()),
		URRs:    make(table[uint32, urrSlot], 0, s.URRs.Len()),
	}
	// Slots are taken in ID order so that a session compiles the same way
	// every time.
	for id, f := range s.FARs.All() {
		v, err := c.far(f)
		if err != nil {
			return img, err
		}
		old := prev.FARs.at(id)
		slot, err := slotFor(again, old.Slot, old.FAR == v && old.Slot != 0, c.farSlots, "FAR", id, 0)
		if err != nil {
			return img, err
		}
		img.FARs.set(id, farSlot{slot, v})
	}
	for id, q := range s.QERs.All() {
		v := datapath.QER{ULClosed: q.GateUL == session.GateClosed, DLClosed: q.GateDL == session.GateClosed,
			MBRUplink: q.MBRUL, MBRDownlink: q.MBRDL, QFI: q.QFI, RQI: q.RQI}
		old := prev.QERs.at(id)
		slot, err := slotFor(again, old.Slot, old.QER == v && old.Slot != 0, c.qerSlots, "QER", id, 0)
		if err != nil {
			return img, err
		}
		img.QERs.set(id, qerSlot{slot, v})
	}
	for id, u := range s.URRs.All() {
		old := prev.URRs.at(id)
		slot, err := slotFor(again, old.Slot, old.Slot != 0, c.urrSlots, "URR", id, 0)
		if err != nil {
			return img, err
		}
		grant, ok := c.spent[urrKey{s.SEID, id}]
		spent := ok && grant == u.Grant
		img.URRs.set(id, urrSlot{slot, urrValue(u, spent), u.Grant, spent})
	}
	var lk lookups
	for _, p := range s.PDRs.All() {
		if err := c.addPDR(img, prev, again, p, &lk); err != nil {
			return img, err
		}
	}
	var err error
	if img.Uplink, err = rulesOf(img.Session, lk.uplink); err != nil {
		return img, err
	}
	img.Downlink, err = rulesOf(img.Session, lk.downlink)
	return img, err
}

// urrValue is a URR as the datapath counts it; spent, its time quota ran
// out, so it lets nothing through until a new grant.
func urrValue(u session.URR, spent bool) datapath.URR {
	v := datapath.URR{MBQE: u.MBQE}
	if q := u.VolQuota; q != nil && q.Total != nil {
		v.HasQuota, v.Quota = true, *q.Total
	}
	if spent {
		v.HasQuota, v.Quota = true, 0
	}
	return v
}

// lookups are the PDRs under each lookup key, as compile meets them.
type lookups struct {
	uplink   table[datapath.UplinkKey, []rankedPDR]
	downlink table[netip.Prefix, []rankedPDR]
}

type rankedPDR struct {
	precedence uint32
	pdr        datapath.PDR
}

// rulesOf turns each key's PDRs into its lookup entry's rules, in
// precedence order (PDR ID among equals).
func rulesOf[K comparable](sess uint32, ranked table[K, []rankedPDR]) (table[K, datapath.Rules], error) {
	out := make(table[K, datapath.Rules], 0, len(ranked))
	for _, e := range ranked {
		key, list := e.Key, e.Val
		if len(list) > datapath.MaxPDRs {
			return out, &session.Error{Cause: session.CauseNoResources, IE: session.IECreatePDR,
				Msg: fmt.Sprintf("%d PDRs (SDF filters and port ranges counted apart) match %v: at most %d", len(list), key, datapath.MaxPDRs)}
		}
		slices.SortStableFunc(list, func(a, b rankedPDR) int {
			return cmp.Or(cmp.Compare(a.precedence, b.precedence), cmp.Compare(a.pdr.ID, b.pdr.ID))
		})
		// Exactly as many as there are: the image keeps them.
		r := datapath.Rules{Session: sess, PDRs: make([]datapath.PDR, len(list))}
		for i, x := range list {
			r.PDRs[i] = x.pdr
		}
		out = append(out, entry[K, datapath.Rules]{key, r})
	}
	return out, nil
}

func (c *Compiler) far(f session.FAR) (datapath.FAR, error) {
	var v datapath.FAR
	for _, m := range []struct {
		pfcp uint16
		dp   datapath.Action
	}{{session.ActDrop, datapath.Drop}, {session.ActForw, datapath.Forw}, {session.ActBuff, datapath.Buff},
		{session.ActNocp, datapath.Nocp}} {
		if f.Action&m.pfcp != 0 {
			v.Action |= m.dp
		}
	}
	fw := f.Forw
	if v.Action&datapath.Forw == 0 || fw == nil {
		return v, nil
	}
	if fw.TOS != nil {
		v.TOS, v.HasTOS = *fw.TOS, true
	}
	if fw.OHC == nil {
		if fw.Dest == session.Access {
			// No tunnel to the gNB yet: nothing to send to.
			v.Action = datapath.Drop
		}
		return v, nil
	}
	// The outer source is an address of the side the FAR sends to, as for
	// every GTP-U message on that path (gtpu.Addrs.Source).
	side := gtpu.Access
	if fw.Dest != session.Access {
		side = gtpu.Core
	}
	var ok bool
	if v.Local, ok = c.ifaces.gtpu().Source(side, fw.OHC.Peer); !ok {
		return v, &session.Error{Cause: session.CauseRuleFailure, IE: session.IEOuterHeaderCreate,
			Msg: fmt.Sprintf("FAR %d: no local address of %v's family toward destination interface %d", f.ID, fw.OHC.Peer, fw.Dest)}
	}
	v.TEID, v.Peer = fw.OHC.TEID, fw.OHC.Peer
	return v, nil
}
