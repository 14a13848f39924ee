package rules

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/saved"
	"github.com/sluice-upf/sluice/internal/session"
)

// SaveSession, SaveList and Restore carry the compiler across a restart
// of upfd that keeps the datapath (pinned maps): the slots of every
// session, as installed, and the list slots of lookups with more than one
// PDR, so that the next process knows which slot holds what without
// touching a map. Each is saved apart, so that a journal can write the
// ones that changed (Touched).

type savedSession struct {
	SEID  uint64
	Slots []uint32 // as kept
	// Spent are the URRs whose time quota ran out, with their grant.
	Spent []savedSpent `json:",omitempty"`
}

type savedSpent struct{ URR, Grant uint32 }

// savedList is a lookup key's list: the key, uplink or downlink, and its run.
type savedList struct {
	Uplink   *datapath.UplinkKey `json:",omitempty"`
	Downlink netip.Prefix        `json:",omitzero"`
	listRun
}

// SaveSession is an installed session's slots, for saved.Append, on any
// goroutine (kept slots are never changed in place); false if it has
// installed nothing.
func (c *Compiler) SaveSession(seid uint64) (any, bool) {
	k, ok := c.installed[seid]
	if !ok {
		return nil, false
	}
	v := savedSession{SEID: seid, Slots: k.Slots}
	for id := range k.from.URRs.IDs() {
		if grant, spent := c.spent[urrKey{seid, id}]; spent {
			v.Spent = append(v.Spent, savedSpent{id, grant})
		}
	}
	return &v, true
}

// ListName names a lookup key's list among the lists, for a journal.
func ListName(key any) string {
	switch key := key.(type) {
	case datapath.UplinkKey:
		return fmt.Sprintf("u%d/%d", key.TEID, key.Endpoint)
	case netip.Prefix:
		return "d" + key.String()
	}
	return fmt.Sprint(key)
}

// SaveList is a lookup key's list, for saved.Append; false if it has none.
func (c *Compiler) SaveList(key any) (any, bool) {
	l, ok := c.lists[key]
	if !ok {
		return nil, false
	}
	v := savedList{listRun: listRun{l, c.listRuns.size(l)}}
	switch key := key.(type) {
	case datapath.UplinkKey:
		v.Uplink = &key
	case netip.Prefix:
		v.Downlink = key
	}
	return &v, true
}

// Lists yields every lookup key with a list.
func (c *Compiler) Lists(yield func(key any) bool) {
	for key := range c.lists {
		if !yield(key) {
			return
		}
	}
}

// Touched yields the lookup keys whose lists changed since the last call
// (SaveList says whether each has one now), and forgets them.
func (c *Compiler) Touched(yield func(key any) bool) {
	for key := range c.touched {
		delete(c.touched, key)
		if !yield(key) {
			return
		}
	}
}

// Restore reads what SaveSession and SaveList made into a compiler that
// has installed nothing yet, and takes every slot held. The sessions are
// the store's, restored before.
func (c *Compiler) Restore(sessions, lists []saved.Raw, get func(seid uint64) (*session.Session, bool)) error {
	if len(c.installed) > 0 {
		return fmt.Errorf("restore into a compiler with %d sessions installed", len(c.installed))
	}
	used := map[*slots][]uint32{}
	for _, raw := range sessions {
		var s savedSession
		if err := saved.Read(raw, &s); err != nil {
			return fmt.Errorf("restore the slots of a session: %w", err)
		}
		k := kept{Slots: s.Slots}
		if k.from, _ = get(s.SEID); k.from == nil {
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
	var runs []listRun
	for _, raw := range lists {
		var l savedList
		if err := saved.Read(raw, &l); err != nil {
			return fmt.Errorf("restore a list slot: %w", err)
		}
		switch {
		case l.Uplink != nil:
			c.lists[*l.Uplink] = l.ID
		case l.Downlink.IsValid():
			c.lists[l.Downlink] = l.ID
		default:
			return fmt.Errorf("restore: list %d has no lookup key", l.ID)
		}
		runs = append(runs, l.listRun)
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

// TrackLists starts noting the lookup keys whose lists change, for
// Touched: a server that keeps a journal asks for it.
func (c *Compiler) TrackLists() { c.touched = map[any]struct{}{} }

// Installed is every op that writes what an installed session holds as
// Commit kept it, its URRs aside (their counts and quota left are the
// datapath's; see datapath.Holds): after a crash, the new process
// compares them with the maps, and applies them where the maps differ.
func (c *Compiler) Installed(seid uint64) ([]datapath.Op, error) {
	k, ok := c.installed[seid]
	if !ok {
		return nil, fmt.Errorf("session %#x has nothing installed", seid)
	}
	img, err := c.full(k)
	if err != nil {
		return nil, err
	}
	ops := make([]datapath.Op, 0, len(img.FARs)+len(img.QERs)+len(img.Uplink)+len(img.Downlink))
	for _, f := range img.FARs {
		ops = append(ops, datapath.PutFAR{ID: f.Val.Slot, FAR: f.Val.FAR, Session: img.Session})
	}
	for _, q := range img.QERs {
		ops = append(ops, datapath.PutQER{ID: q.Val.Slot, QER: q.Val.QER, Session: img.Session})
	}
	for _, e := range img.Uplink {
		ops = append(ops, datapath.PutUplink{Key: e.Key, Rules: withList(e.Val, c.lists[e.Key])})
	}
	for _, e := range img.Downlink {
		ops = append(ops, datapath.PutDownlink{UE: e.Key, Rules: withList(e.Val, c.lists[e.Key])})
	}
	return ops, nil
}

// SavedTypes are the types this package saves, for the journal's Layout.
func SavedTypes() []any { return []any{savedSession{}, savedList{}} }
