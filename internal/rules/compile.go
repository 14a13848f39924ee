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

// kept is what the compiler keeps of an installed session: the slots its
// rules hold and the session itself (the store's, immutable). The lookup
// entries are not kept: they hold a copy of every PDR, and compile gives
// them back from the session and the slots (full). At a million sessions
// that halves the compiler's memory. Its fields are exported for Save.
type kept struct {
	Session uint32
	FARs    table[uint32, farSlot] // by FAR ID
	QERs    table[uint32, qerSlot]
	URRs    table[uint32, urrSlot]
	SDFs    table[datapath.SDF, sdfSlot] // filter -> slot

	from *session.Session
}

// image is a session compiled: its slots and its lookup entries.
type image struct {
	kept
	Uplink   table[datapath.UplinkKey, datapath.Rules]
	Downlink table[netip.Prefix, datapath.Rules]
}

// full is the image of what k installed. Every rule's value and slot are
// as kept, so compile reuses them all and takes no slot.
func (c *Compiler) full(k *kept) *image {
	img, err := c.compile(k.from, &image{kept: *k})
	if err != nil {
		// It compiled once into these very slots: it cannot fail now.
		panic(fmt.Sprintf("rules: session %#x no longer compiles: %v", k.Session, err))
	}
	return img
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
// the same (and for every URR that stays) and new ones otherwise. Lists
// for multi-PDR entries get their slots later, in plan.
func (c *Compiler) compile(s *session.Session, prev *image) (*image, error) {
	img := &image{kept: kept{
		from:    s,
		Session: uint32(s.SEID),
		FARs:    make(table[uint32, farSlot], 0, s.FARs.Len()),
		QERs:    make(table[uint32, qerSlot], 0, s.QERs.Len()),
		URRs:    make(table[uint32, urrSlot], 0, s.URRs.Len()),
	}}
	// Slots are taken in ID order so that a session compiles the same way
	// every time.
	for id, f := range s.FARs.All() {
		v, err := c.far(f)
		if err != nil {
			return img, err
		}
		old := prev.FARs.at(id)
		slot, err := reuse(old.Slot, old.FAR == v && old.Slot != 0, c.farSlots, "FAR", id)
		if err != nil {
			return img, err
		}
		img.FARs.set(id, farSlot{slot, v})
	}
	for id, q := range s.QERs.All() {
		v := datapath.QER{ULClosed: q.GateUL == session.GateClosed, DLClosed: q.GateDL == session.GateClosed,
			MBRUplink: q.MBRUL, MBRDownlink: q.MBRDL, QFI: q.QFI, RQI: q.RQI}
		old := prev.QERs.at(id)
		slot, err := reuse(old.Slot, old.QER == v && old.Slot != 0, c.qerSlots, "QER", id)
		if err != nil {
			return img, err
		}
		img.QERs.set(id, qerSlot{slot, v})
	}
	for id, u := range s.URRs.All() {
		v := datapath.URR{MBQE: u.MBQE}
		if q := u.VolQuota; q != nil && q.Total != nil {
			v.HasQuota, v.Quota = true, *q.Total
		}
		old := prev.URRs.at(id)
		slot, err := reuse(old.Slot, old.Slot != 0, c.urrSlots, "URR", id)
		if err != nil {
			return img, err
		}
		spent := old.Spent && old.Grant == u.Grant
		if spent {
			v.HasQuota, v.Quota = true, 0
		}
		img.URRs.set(id, urrSlot{slot, v, u.Grant, spent})
	}
	var ranked table[any, []rankedPDR] // lookup key -> its PDRs
	for _, p := range s.PDRs.All() {
		if err := c.addPDR(img, prev, p, &ranked); err != nil {
			return img, err
		}
	}
	for _, e := range ranked {
		key, list := e.Key, e.Val
		slices.SortStableFunc(list, func(a, b rankedPDR) int {
			return cmp.Or(cmp.Compare(a.precedence, b.precedence), cmp.Compare(a.pdr.ID, b.pdr.ID))
		})
		// Exactly as many as there are: the image keeps them.
		r := datapath.Rules{Session: img.Session, PDRs: make([]datapath.PDR, len(list))}
		for i, x := range list {
			r.PDRs[i] = x.pdr
		}
		if len(r.PDRs) > datapath.MaxPDRs {
			return img, &session.Error{Cause: session.CauseNoResources, IE: session.IECreatePDR,
				Msg: fmt.Sprintf("%d PDRs (SDF filters and port ranges counted apart) match %v: at most %d", len(r.PDRs), key, datapath.MaxPDRs)}
		}
		switch k := key.(type) {
		case datapath.UplinkKey:
			img.Uplink.set(k, r)
		case netip.Prefix:
			img.Downlink.set(k, r)
		}
	}
	return img, nil
}

type rankedPDR struct {
	precedence uint32
	pdr        datapath.PDR
}

// reuse keeps slot if same, else takes a new one from pool.
func reuse(slot uint32, same bool, pool *slots, kind string, id uint32) (uint32, error) {
	if same {
		return slot, nil
	}
	n, ok := pool.get()
	if !ok {
		return 0, &session.Error{Cause: session.CauseNoResources, Msg: fmt.Sprintf("%s %d: the datapath's %s table is full", kind, id, kind)}
	}
	return n, nil
}

func (c *Compiler) far(f session.FAR) (datapath.FAR, error) {
	var v datapath.FAR
	for _, m := range []struct {
		pfcp uint16
		dp   datapath.Action
	}{{session.ActDrop, datapath.Drop}, {session.ActForw, datapath.Forw}, {session.ActBuff, datapath.Buff},
		{session.ActNocp, datapath.Nocp}, {session.ActDupl, datapath.Dupl}} {
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
