package rules

import (
	"maps"
	"net/netip"
	"reflect"
	"slices"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// Compiler compiles sessions and remembers what each has installed. Not
// safe for concurrent use: the PFCP server is its one user.
type Compiler struct {
	ifaces    Interfaces
	farSlots  *slots
	qerSlots  *slots
	urrSlots  *slots
	sdfSlots  *slots
	listSlots *slots
	installed map[uint64]*image // by SEID
	lists     map[any]uint32    // lookup key -> its list slot, when it has one
}

// NewCompiler sizes the slot tables as the datapath made them.
func NewCompiler(ifaces Interfaces, sizes datapath.Sizes) *Compiler {
	return &Compiler{
		ifaces:    ifaces,
		farSlots:  newSlots(sizes.FARs),
		qerSlots:  newSlots(sizes.QERs),
		urrSlots:  newSlots(sizes.URRs),
		sdfSlots:  newSlots(sizes.SDFs),
		listSlots: newSlots(sizes.PDRLists),
		installed: map[uint64]*image{},
		lists:     map[any]uint32{},
	}
}

// Plan is the way from what a session has installed to what it should have.
type Plan struct {
	SEID uint64
	// Ops take the datapath there; Undo, applied after a failure of Ops,
	// puts back every lookup entry as it was (old slots were never touched).
	Ops, Undo []datapath.Op

	next      *image // nil: the session is gone
	newSlots  []func()
	freeSlots []func()
	lists     map[any]uint32 // list slots of next, by key
}

var empty = &image{}

// Plan compiles next (nil: the session is deleted) against what seid has
// installed. It takes slots; Commit keeps them, Abort gives them back.
func (c *Compiler) Plan(seid uint64, next *session.Session) (*Plan, error) {
	prev := c.installed[seid]
	if prev == nil {
		prev = empty
	}
	p := &Plan{SEID: seid, lists: map[any]uint32{}}
	img := empty
	if next != nil {
		var err error
		img, err = c.compile(next, prev)
		p.next = img
		p.trackNew(c, prev, img)
		if err != nil {
			c.Abort(p)
			return nil, err
		}
	}
	if err := c.diff(p, prev, img); err != nil {
		c.Abort(p)
		return nil, err
	}
	return p, nil
}

// trackNew notes the slots img took that prev did not hold, to give them
// back on Abort.
func (p *Plan) trackNew(c *Compiler, prev, img *image) {
	for _, k := range []struct {
		prev, next map[uint32]bool
		pool       *slots
	}{
		{slotSet(prev.fars), slotSet(img.fars), c.farSlots},
		{slotSet(prev.qers), slotSet(img.qers), c.qerSlots},
		{slotSet(prev.urrs), slotSet(img.urrs), c.urrSlots},
		{sdfSet(prev.sdfs), sdfSet(img.sdfs), c.sdfSlots},
	} {
		for s := range k.next {
			if !k.prev[s] {
				p.newSlots = append(p.newSlots, func() { k.pool.put(s) })
			}
		}
	}
}

func slotSet[T interface{ slotOf() uint32 }](m map[uint32]T) map[uint32]bool {
	s := map[uint32]bool{}
	for _, v := range m {
		s[v.slotOf()] = true
	}
	return s
}

func sdfSet(m map[datapath.SDF]uint32) map[uint32]bool {
	s := map[uint32]bool{}
	for _, v := range m {
		s[v] = true
	}
	return s
}

func (f farSlot) slotOf() uint32 { return f.slot }
func (q qerSlot) slotOf() uint32 { return q.slot }
func (u urrSlot) slotOf() uint32 { return u.slot }

// diff writes the ops from prev to next: new and changed slots, lookup
// entries that changed, entries that went, slots no longer used.
func (c *Compiler) diff(p *Plan, prev, next *image) error {
	sess := next.session
	if next == empty {
		sess = prev.session
	}
	for id, f := range next.fars {
		if prev.fars[id] != f {
			p.Ops = append(p.Ops, datapath.PutFAR{ID: f.slot, FAR: f.far, Session: sess})
		}
	}
	for id, q := range next.qers {
		if prev.qers[id] != q {
			p.Ops = append(p.Ops, datapath.PutQER{ID: q.slot, QER: q.qer, Session: sess})
		}
	}
	for id, u := range next.urrs {
		if old, ok := prev.urrs[id]; !ok || old != u {
			p.Ops = append(p.Ops, datapath.PutURR{ID: u.slot, URR: u.urr, Reset: !ok, Session: sess})
		}
	}
	if err := diffLookups(c, p, prev.uplink, next.uplink,
		func(k datapath.UplinkKey, r datapath.Rules) datapath.Op { return datapath.PutUplink{Key: k, Rules: r} },
		func(k datapath.UplinkKey) datapath.Op { return datapath.DelUplink{Key: k} }); err != nil {
		return err
	}
	if err := diffLookups(c, p, prev.downlink, next.downlink,
		func(k netip.Prefix, r datapath.Rules) datapath.Op { return datapath.PutDownlink{UE: k, Rules: r} },
		func(k netip.Prefix) datapath.Op { return datapath.DelDownlink{UE: k} }); err != nil {
		return err
	}
	free := func(kind datapath.Slot, pool *slots, old, now map[uint32]bool) {
		for _, s := range slices.Sorted(maps.Keys(old)) {
			if !now[s] {
				p.Ops = append(p.Ops, datapath.Free{Slot: kind, ID: s})
				p.freeSlots = append(p.freeSlots, func() { pool.put(s) })
			}
		}
	}
	free(datapath.SlotFAR, c.farSlots, slotSet(prev.fars), slotSet(next.fars))
	free(datapath.SlotQER, c.qerSlots, slotSet(prev.qers), slotSet(next.qers))
	free(datapath.SlotURR, c.urrSlots, slotSet(prev.urrs), slotSet(next.urrs))
	free(datapath.SlotSDF, c.sdfSlots, sdfSet(prev.sdfs), sdfSet(next.sdfs))
	return nil
}

// diffLookups puts entries that are new or changed and removes those that
// went. An entry with several PDRs gets a new list slot whenever it
// changes, so a packet never reads a list half written.
func diffLookups[K comparable](c *Compiler, p *Plan, prev, next map[K]datapath.Rules,
	put func(K, datapath.Rules) datapath.Op, del func(K) datapath.Op) error {
	for k, r := range next {
		old, had := prev[k]
		if had && reflect.DeepEqual(old, r) {
			if l, ok := c.lists[k]; ok {
				p.lists[k] = l
			}
			continue
		}
		if len(r.PDRs) > 1 {
			l, ok := c.listSlots.get()
			if !ok {
				return &session.Error{Cause: session.CauseNoResources, IE: session.IECreatePDR, Msg: "the datapath's PDR list table is full"}
			}
			r.ListID = l
			p.lists[k] = l
			p.newSlots = append(p.newSlots, func() { c.listSlots.put(l) })
		}
		p.Ops = append(p.Ops, put(k, r))
		if had {
			p.Undo = append(p.Undo, put(k, withList(old, c.lists[k])))
		} else {
			p.Undo = append(p.Undo, del(k))
		}
	}
	for k, old := range prev {
		if _, kept := next[k]; !kept {
			p.Ops = append(p.Ops, del(k))
			p.Undo = append(p.Undo, put(k, withList(old, c.lists[k])))
		}
	}
	// A list slot the key held and no longer uses is freed after the switch.
	for k := range prev {
		if l, ok := c.lists[k]; ok && p.lists[k] != l {
			p.Ops = append(p.Ops, datapath.Free{Slot: datapath.SlotList, ID: l})
			p.freeSlots = append(p.freeSlots, func() { c.listSlots.put(l) })
		}
	}
	return nil
}

func withList(r datapath.Rules, l uint32) datapath.Rules {
	r.ListID = l
	return r
}

// Commit records the plan as installed, once the datapath applied it.
func (c *Compiler) Commit(p *Plan) {
	for _, f := range p.freeSlots {
		f()
	}
	prev := c.installed[p.SEID]
	if prev != nil {
		for k := range prev.uplink {
			delete(c.lists, k)
		}
		for k := range prev.downlink {
			delete(c.lists, k)
		}
	}
	if p.next == nil || p.next == empty {
		delete(c.installed, p.SEID)
		return
	}
	c.installed[p.SEID] = p.next
	maps.Copy(c.lists, p.lists)
}

// Abort gives back what the plan took.
func (c *Compiler) Abort(p *Plan) {
	for _, f := range p.newSlots {
		f()
	}
	p.newSlots = nil
}

// SpendTimeQuota stops the traffic a URR measures, its time quota spent
// (§5.2.2.2.1), until the SMF grants another. It returns the op to apply;
// the image records it so later changes keep it.
func (c *Compiler) SpendTimeQuota(seid uint64, urrID uint32) (datapath.Op, bool) {
	img := c.installed[seid]
	if img == nil {
		return nil, false
	}
	u, ok := img.urrs[urrID]
	if !ok || u.spent {
		return nil, false
	}
	u.spent, u.urr.HasQuota, u.urr.Quota = true, true, 0
	img.urrs[urrID] = u
	return datapath.PutURR{ID: u.slot, URR: u.urr, Session: img.session}, true
}

// URRSlots is where each URR of an installed session counts.
func (c *Compiler) URRSlots(seid uint64) map[uint32]uint32 {
	out := map[uint32]uint32{}
	if img := c.installed[seid]; img != nil {
		for id, u := range img.urrs {
			out[id] = u.slot
		}
	}
	return out
}
