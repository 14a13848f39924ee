package rules

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"

	"github.com/sluice-upf/sluice/internal/datapath"
)

// Save and Restore carry the compiler across a restart of upfd that keeps
// the datapath (pinned maps): every session's image, as installed, so that
// the next process knows which slot holds what without touching a map.

type savedImage struct {
	SEID  uint64
	Image *image
	// The list slots of the image's lookups that have more than one PDR.
	UplinkLists   table[datapath.UplinkKey, uint32]
	DownlinkLists table[netip.Prefix, uint32]
}

// Save writes what every session has installed: a count, then the images.
func (c *Compiler) Save(enc *json.Encoder) error {
	if err := enc.Encode(len(c.installed)); err != nil {
		return err
	}
	for seid, img := range c.installed {
		v := savedImage{SEID: seid, Image: img}
		for _, e := range img.Uplink {
			if l, ok := c.lists[e.Key]; ok {
				v.UplinkLists.set(e.Key, l)
			}
		}
		for _, e := range img.Downlink {
			if l, ok := c.lists[e.Key]; ok {
				v.DownlinkLists.set(e.Key, l)
			}
		}
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("save the image of session %#x: %w", seid, err)
		}
	}
	return nil
}

// Restore reads what Save wrote into a compiler that has installed
// nothing yet, and takes every slot the images hold.
func (c *Compiler) Restore(dec *json.Decoder) error {
	if len(c.installed) > 0 {
		return fmt.Errorf("restore into a compiler with %d sessions installed", len(c.installed))
	}
	var n int
	if err := dec.Decode(&n); err != nil {
		return err
	}
	used := map[*slots][]uint32{}
	for range n {
		var s savedImage
		if err := dec.Decode(&s); err != nil {
			return fmt.Errorf("restore an image: %w", err)
		}
		if s.Image == nil {
			return fmt.Errorf("restore: session %#x has no image", s.SEID)
		}
		img := s.Image
		c.installed[s.SEID] = img
		used[c.farSlots] = append(used[c.farSlots], slotsOf(img.FARs)...)
		used[c.qerSlots] = append(used[c.qerSlots], slotsOf(img.QERs)...)
		used[c.urrSlots] = append(used[c.urrSlots], slotsOf(img.URRs)...)
		used[c.sdfSlots] = append(used[c.sdfSlots], sdfSlots(img.SDFs)...)
		for _, e := range s.UplinkLists {
			c.lists[e.Key] = e.Val
			used[c.listSlots] = append(used[c.listSlots], e.Val)
		}
		for _, e := range s.DownlinkLists {
			c.lists[e.Key] = e.Val
			used[c.listSlots] = append(used[c.listSlots], e.Val)
		}
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
