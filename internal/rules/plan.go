package rules

import (
	"cmp"
	"iter"
	"net/netip"
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
	listRuns  *listRuns
	installed map[uint64]kept // by SEID
	lists     map[any]uint32  // lookup key -> its list slot, when it has one
	// spent are the URRs whose time quota ran out, with the grant it ran
	// out on: the datapath lets nothing through them until a new grant.
	spent map[urrKey]uint32
	// touched are the lookup keys whose lists changed (state.go); nil
	// until TrackLists.
	touched map[any]struct{}

	// Scratch for compile: a PDR's filters and its datapath PDRs.
	filters []datapath.SDF
	entries []datapath.PDR
}

type urrKey struct {
	seid uint64
	urr  uint32
}

// NewCompiler sizes the slot tables as the datapath made them.
func NewCompiler(ifaces Interfaces, sizes datapath.Sizes) *Compiler {
	return &Compiler{
		ifaces:    ifaces,
		farSlots:  newSlots("FAR", sizes.FARs),
		qerSlots:  newSlots("QER", sizes.QERs),
		urrSlots:  newSlots("URR", sizes.URRs),
		sdfSlots:  newSlots("SDF", sizes.SDFs),
		listRuns:  newListRuns(sizes.ListSlots),
		installed: map[uint64]kept{},
		lists:     map[any]uint32{},
		spent:     map[urrKey]uint32{},
	}
}

// Plan is the way from what a session has installed to what it should have.
type Plan struct {
	SEID uint64
	// Ops take the datapath there; Undo, applied after a failure of Ops,
	// puts back every lookup entry as it was (old slots were never touched).
	Ops, Undo []datapath.Op

	prev      *image
	next      *image             // nil: the session is gone
	newSlots  []held             // taken: given back on Abort
	freeSlots []held             // no longer used: given back on Commit
	lists     table[any, uint32] // list slots of next, by key
	// Lists taken (given back on Abort) and no longer used (on Commit).
	newLists, freeLists []uint32
}

var empty = &image{}

// Plan compiles next (nil: the session is deleted) against what seid has
// installed. It takes slots; Commit keeps them, Abort gives them back.
func (c *Compiler) Plan(seid uint64, next *session.Session) (*Plan, error) {
	prev := empty
	if k, ok := c.installed[seid]; ok {
		var err error
		if prev, err = c.full(k); err != nil {
			return nil, &session.Error{Cause: session.CauseSystemFailure, Msg: err.Error()}
		}
	}
	p := &Plan{SEID: seid, prev: prev, newSlots: make([]held, 0, 8)} // a typical session's slots
	img := empty
	if next != nil {
		var err error
		img, err = c.compile(next, prev, nil)
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
	p.newSlots = slotsOnlyIn(p.newSlots, c.farSlots, img.FARs, prev.FARs)
	p.newSlots = slotsOnlyIn(p.newSlots, c.qerSlots, img.QERs, prev.QERs)
	p.newSlots = slotsOnlyIn(p.newSlots, c.urrSlots, img.URRs, prev.URRs)
	p.newSlots = slotsOnlyIn(p.newSlots, c.sdfSlots, img.SDFs, prev.SDFs)
}

// held is a slot of a pool: one to give back on Abort, or on Commit.
type held struct {
	pool *slots
	id   uint32
}

type slotted interface{ slotOf() uint32 }

// slotsOnlyIn appends to out the slots that the rules of a hold and those
// of b do not, in slot order.
func slotsOnlyIn[K comparable, V slotted](out []held, pool *slots, a, b table[K, V]) []held {
	n := len(out)
	for _, e := range a {
		if s := e.Val.slotOf(); !holds(b, s) {
			out = append(out, held{pool, s})
		}
	}
	slices.SortFunc(out[n:], func(x, y held) int { return cmp.Compare(x.id, y.id) })
	return out
}

func holds[K comparable, V slotted](t table[K, V], slot uint32) bool {
	for _, e := range t {
		if e.Val.slotOf() == slot {
			return true
		}
	}
	return false
}

// slotIDs appends to out the slots a table's rules hold.
func slotIDs[K comparable, V slotted](out []uint32, t table[K, V]) []uint32 {
	for _, e := range t {
		out = append(out, e.Val.slotOf())
	}
	return out
}

func (f farSlot) slotOf() uint32 { return f.Slot }
func (q qerSlot) slotOf() uint32 { return q.Slot }
func (u urrSlot) slotOf() uint32 { return u.Slot }
func (s sdfSlot) slotOf() uint32 { return uint32(s) }

// diff writes the ops from prev to next: new and changed slots, lookup
// entries that changed, entries that went, slots no longer used.
func (c *Compiler) diff(p *Plan, prev, next *image) error {
	sess := next.Session
	if next == empty {
		sess = prev.Session
	}
	// Room for every op there can be, so that the list grows once.
	p.Ops = make([]datapath.Op, 0, len(next.FARs)+len(next.QERs)+len(next.URRs)+len(next.Uplink)+len(next.Downlink)+
		len(prev.Uplink)+len(prev.Downlink))
	p.Undo = make([]datapath.Op, 0, len(next.Uplink)+len(next.Downlink)+len(prev.Uplink)+len(prev.Downlink))
	for _, f := range next.FARs {
		if old, ok := prev.FARs.get(f.Key); !ok || old != f.Val {
			p.Ops = append(p.Ops, datapath.PutFAR{ID: f.Val.Slot, FAR: f.Val.FAR, Session: sess})
		}
	}
	for _, q := range next.QERs {
		if old, ok := prev.QERs.get(q.Key); !ok || old != q.Val {
			p.Ops = append(p.Ops, datapath.PutQER{ID: q.Val.Slot, QER: q.Val.QER, Session: sess})
		}
	}
	for _, u := range next.URRs {
		if old, ok := prev.URRs.get(u.Key); !ok || old != u.Val {
			p.Ops = append(p.Ops, datapath.PutURR{ID: u.Val.Slot, URR: u.Val.URR, Reset: !ok, Session: sess})
		}
	}
	if err := diffLookups(c, p, prev.Uplink, next.Uplink,
		func(k datapath.UplinkKey, r datapath.Rules) datapath.Op { return datapath.PutUplink{Key: k, Rules: r} },
		func(k datapath.UplinkKey) datapath.Op { return datapath.DelUplink{Key: k} }); err != nil {
		return err
	}
	if err := diffLookups(c, p, prev.Downlink, next.Downlink,
		func(k netip.Prefix, r datapath.Rules) datapath.Op { return datapath.PutDownlink{UE: k, Rules: r} },
		func(k netip.Prefix) datapath.Op { return datapath.DelDownlink{UE: k} }); err != nil {
		return err
	}
	// Slots no longer used need no op (see datapath.Apply); Commit gives
	// them back, once the datapath no longer points at them.
	p.freeSlots = slotsOnlyIn(p.freeSlots, c.farSlots, prev.FARs, next.FARs)
	p.freeSlots = slotsOnlyIn(p.freeSlots, c.qerSlots, prev.QERs, next.QERs)
	p.freeSlots = slotsOnlyIn(p.freeSlots, c.urrSlots, prev.URRs, next.URRs)
	p.freeSlots = slotsOnlyIn(p.freeSlots, c.sdfSlots, prev.SDFs, next.SDFs)
	return nil
}

// diffLookups puts entries that are new or changed and removes those that
// went. An entry with several PDRs gets a new list slot whenever it
// changes, so a packet never reads a list half written.
func diffLookups[K comparable](c *Compiler, p *Plan, prev, next table[K, datapath.Rules],
	put func(K, datapath.Rules) datapath.Op, del func(K) datapath.Op) error {
	for _, e := range next {
		k, r := e.Key, e.Val
		old, had := prev.get(k)
		if had && sameRules(old, r) {
			if l, ok := c.lists[k]; ok {
				p.lists.set(k, l)
			}
			continue
		}
		if len(r.PDRs) > 1 {
			l, ok := c.listRuns.get(len(r.PDRs))
			if !ok {
				return &session.Error{Cause: session.CauseNoResources, IE: session.IECreatePDR, Msg: "the datapath's PDR list table is full"}
			}
			r.ListID = l
			p.lists.set(k, l)
			p.newLists = append(p.newLists, l)
		}
		p.Ops = append(p.Ops, put(k, r))
		if had {
			p.Undo = append(p.Undo, put(k, withList(old, c.lists[k])))
		} else {
			p.Undo = append(p.Undo, del(k))
		}
	}
	for _, e := range prev {
		if _, kept := next.get(e.Key); !kept {
			p.Ops = append(p.Ops, del(e.Key))
			p.Undo = append(p.Undo, put(e.Key, withList(e.Val, c.lists[e.Key])))
		}
	}
	// A list slot the key held and no longer uses is freed after the switch.
	for _, e := range prev {
		if l, ok := c.lists[e.Key]; ok && p.lists.at(e.Key) != l {
			p.freeLists = append(p.freeLists, l)
		}
	}
	return nil
}

// sameRules: the lookup entry needs no rewrite (its list slot aside).
func sameRules(a, b datapath.Rules) bool {
	return a.Session == b.Session && slices.Equal(a.PDRs, b.PDRs)
}

func withList(r datapath.Rules, l uint32) datapath.Rules {
	r.ListID = l
	return r
}

// Commit records the plan as installed, once the datapath applied it.
func (c *Compiler) Commit(p *Plan) {
	for _, h := range p.freeSlots {
		h.pool.put(h.id)
	}
	for _, l := range p.freeLists {
		c.listRuns.put(l)
	}
	for _, e := range p.prev.Uplink {
		c.unlist(e.Key)
	}
	for _, e := range p.prev.Downlink {
		c.unlist(e.Key)
	}
	for _, u := range p.prev.URRs {
		if u.Val.Spent {
			delete(c.spent, urrKey{p.SEID, u.Key})
		}
	}
	if p.next == nil || p.next == empty {
		delete(c.installed, p.SEID)
		return
	}
	c.installed[p.SEID] = p.next.kept()
	for _, u := range p.next.URRs {
		if u.Val.Spent {
			c.spent[urrKey{p.SEID, u.Key}] = u.Val.Grant
		}
	}
	for _, e := range p.lists {
		c.lists[e.Key] = e.Val
		c.touch(e.Key)
	}
}

// unlist forgets a lookup key's list, if it had one.
func (c *Compiler) unlist(key any) {
	if _, ok := c.lists[key]; ok {
		delete(c.lists, key)
		c.touch(key)
	}
}

func (c *Compiler) touch(key any) {
	if c.touched != nil {
		c.touched[key] = struct{}{}
	}
}

// Abort gives back what the plan took.
func (c *Compiler) Abort(p *Plan) {
	for _, h := range p.newSlots {
		h.pool.put(h.id)
	}
	for _, l := range p.newLists {
		c.listRuns.put(l)
	}
	p.newSlots, p.newLists = nil, nil
}

// SpendTimeQuota stops the traffic a URR measures, its time quota spent
// (§5.2.2.2.1), until the SMF grants another. It returns the op to apply;
// the compiler keeps it so later changes keep it.
func (c *Compiler) SpendTimeQuota(seid uint64, urrID uint32) (datapath.Op, bool) {
	slot, u, ok := c.urr(seid, urrID)
	if !ok {
		return nil, false
	}
	if _, spent := c.spent[urrKey{seid, urrID}]; spent {
		return nil, false
	}
	c.spent[urrKey{seid, urrID}] = u.Grant
	return datapath.PutURR{ID: slot, URR: urrValue(u, true), Session: uint32(seid)}, true
}

// urr is an installed session's URR and its slot.
func (c *Compiler) urr(seid uint64, id uint32) (uint32, session.URR, bool) {
	for slot, u := range c.urrs(seid) {
		if u.ID == id {
			return slot, u, true
		}
	}
	return 0, session.URR{}, false
}

// URRSlots is where each URR of an installed session counts.
func (c *Compiler) URRSlots(seid uint64) map[uint32]uint32 {
	out := map[uint32]uint32{}
	for slot, u := range c.urrs(seid) {
		out[u.ID] = slot
	}
	return out
}

// urrs yields an installed session's URRs with their slots, in ID order.
func (c *Compiler) urrs(seid uint64) iter.Seq2[uint32, session.URR] {
	return func(yield func(uint32, session.URR) bool) {
		k, ok := c.installed[seid]
		if !ok {
			return
		}
		_, _, slots, _, ok := k.slotsOf()
		if !ok {
			return
		}
		i := 0
		for _, u := range k.from.URRs.All() {
			if !yield(slots[i], u) {
				return
			}
			i++
		}
	}
}
