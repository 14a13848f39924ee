package rules

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// Save and Restore carry the compiler across a restart of upfd that keeps
// the datapath (pinned maps): the slots of every session, as installed,
// and the list slots of lookups with more than one PDR, so that the next
// process knows which slot holds what without touching a map.

type savedSession struct {
	SEID  uint64
	Slots []uint32 // as kept
	// Spent are the URRs whose time quota ran out, with their grant.
	Spent []savedSpent `json:",omitempty"`
}

type savedSpent struct{ URR, Grant uint32 }

// savedLists are the list slots by lookup key, with their runs' sizes.
type savedLists struct {
	Uplink   table[datapath.UplinkKey, listRun]
	Downlink table[netip.Prefix, listRun]
}

// Save writes a count, the sessions' slots, then the list slots.
func (c *Compiler) Save(enc *json.Encoder) error {
	if err := enc.Encode(len(c.installed)); err != nil {
		return err
	}
	for seid, k := range c.installed {
		v := savedSession{SEID: seid, Slots: k.Slots}
		for id := range k.from.URRs.IDs() {
			if grant, spent := c.spent[urrKey{seid, id}]; spent {
				v.Spent = append(v.Spent, savedSpent{id, grant})
			}
		}
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("save the slots of session %#x: %w", seid, err)
		}
	}
	var lists savedLists
	for key, l := range c.lists {
		run := listRun{l, c.listRuns.size(l)}
		switch key := key.(type) {
		case datapath.UplinkKey:
			lists.Uplink = append(lists.Uplink, entry[datapath.UplinkKey, listRun]{key, run})
		case netip.Prefix:
			lists.Downlink = append(lists.Downlink, entry[netip.Prefix, listRun]{key, run})
		}
	}
	return enc.Encode(lists)
}

// Restore reads what Save wrote into a compiler that has installed
// nothing yet, and takes every slot held. The sessions are the store's,
// restored before.
func (c *Compiler) Restore(dec *json.Decoder, sessions func(seid uint64) (*session.Session, bool)) error {
	if len(c.installed) > 0 {
		return fmt.Errorf("restore into a compiler with %d sessions installed", len(c.installed))
	}
	var n int
	if err := dec.Decode(&n); err != nil {
		return err
	}
	used := map[*slots][]uint32{}
	for range n {
		var s savedSession
		if err := dec.Decode(&s); err != nil {
			return fmt.Errorf("restore the slots of a session: %w", err)
		}
		k := kept{Slots: s.Slots}
		if k.from, _ = sessions(s.SEID); k.from == nil {
			return fmt.Errorf("restore: session %#x has slots but is not in the store", s.SEID)
		}
		fars, qers, urrs, sdfs, ok := k.slotsOf()
		if !ok {
			return fmt.Errorf("restore: session %#x has %d slots, fewer than its rules", s.SEID, len(s.Slots))
		}
		c.installed[s.SEID] = k
		for _, x := range s.Spent {
			c.spent[urrKey{s.SEID, x.URR}] = x.Grant
		}
		used[c.farSlots] = append(used[c.farSlots], fars...)
		used[c.qerSlots] = append(used[c.qerSlots], qers...)
		used[c.urrSlots] = append(used[c.urrSlots], urrs...)
		used[c.sdfSlots] = append(used[c.sdfSlots], sdfs...)
	}
	var lists savedLists
	if err := dec.Decode(&lists); err != nil {
		return fmt.Errorf("restore the list slots: %w", err)
	}
	var runs []listRun
	for _, e := range lists.Uplink {
		c.lists[e.Key] = e.Val.ID
		runs = append(runs, e.Val)
	}
	for _, e := range lists.Downlink {
		c.lists[e.Key] = e.Val.ID
		runs = append(runs, e.Val)
	}
	if err := c.listRuns.take(runs); err != nil {
		return err
	}
	for pool, ids := range used {
		if err := pool.take(ids); err != nil {
			return err
		}
	}
	return nil
}

// take marks ids as held, in a pool that has handed out none: the next
// slots come from the gaps, then from above the highest.
func (s *slots) take(ids []uint32) error {
	slices.Sort(ids)
	if d := slices.Compact(ids); len(d) != len(ids) {
		return fmt.Errorf("a slot is held twice")
	}
	if len(ids) == 0 {
		return nil
	}
	if top := ids[len(ids)-1]; top >= s.n {
		return fmt.Errorf("slot %d is beyond the table's %d", top, s.n)
	}
	s.free = s.free[:0]
	next := uint32(1)
	for _, id := range ids {
		for ; next < id; next++ {
			s.free = append(s.free, next)
		}
		next = id + 1
	}
	s.next = next
	slices.Reverse(s.free) // get pops from the end: lowest first
	return nil
}
