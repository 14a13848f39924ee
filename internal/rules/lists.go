package rules

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/sluice-upf/sluice/internal/datapath"
)

// listRuns hands out the datapath's PDR lists (datapath.Rules.ListID): a
// list of n PDRs takes a run of consecutive slots of its list table, which
// hold two PDRs each: 1, 2, 4, 8 or 16 slots, the fewest that hold n. An
// Open5GS session's two uplink PDRs so take one slot, not a list of 32,
// and one table serves every mix of list lengths while it has room.
//
// It is a buddy allocator: a run is aligned to its size; when none of the
// size wanted is free a larger one is split, and a freed run merges with
// its buddy (the other half of the run it was split from) when that is
// free too. Offsets count from slot 1, since list 0 means none.
type listRuns struct {
	total uint32 // offsets 0..total-1, whole runs of the largest size
	next  uint32 // largest runs at and above next were never handed out
	// free are the free runs of each order (2^order slots) by offset;
	// an entry is stale unless isFree says so (it merged since).
	free   [maxOrder + 1][]uint32
	isFree [maxOrder + 1][]uint64 // a bit per run of the order
	order  []uint8                // by offset: 1 + order of the run held there, 0 = none
	held   int                    // runs handed out
}

const maxOrder = 4 // 16 slots of two PDRs: datapath.MaxPDRs

var _ = [1]struct{}{}[datapath.ListRun-1<<maxOrder] // a largest run is datapath.ListRun

// newListRuns manages a list table of n slots (datapath.Sizes.ListSlots).
func newListRuns(n uint32) *listRuns {
	r := &listRuns{total: max(n, 1) - 1}
	r.total -= r.total % (1 << maxOrder)
	for k := range maxOrder + 1 {
		r.isFree[k] = make([]uint64, (r.total>>k+63)/64)
	}
	r.order = make([]uint8, r.total)
	return r
}

// orderOf is the order of the smallest run that holds n PDRs.
func orderOf(n int) int {
	return bits.Len(uint((n+1)/2 - 1))
}

// get takes a run for a list of n PDRs and returns its first slot.
func (r *listRuns) get(n int) (uint32, bool) {
	want := orderOf(n)
	if want > maxOrder {
		return 0, false
	}
	k := want
	off, ok := r.pop(k)
	for !ok && k < maxOrder {
		k++
		off, ok = r.pop(k)
	}
	if !ok {
		if r.next >= r.total {
			return 0, false
		}
		off, k = r.next, maxOrder
		r.next += 1 << maxOrder
	}
	for ; k > want; k-- { // keep the lower half, free the upper
		r.push(k-1, off+1<<(k-1))
	}
	r.order[off] = uint8(want) + 1
	r.held++
	return off + 1, true
}

// runAt is the run that starts at slot id: its offset, and 1 + its order
// (0: no run starts there).
func (r *listRuns) runAt(id uint32) (uint32, uint8) {
	off := id - 1
	if id == 0 || off >= r.total {
		return off, 0
	}
	return off, r.order[off]
}

// put gives back the run that starts at slot id.
func (r *listRuns) put(id uint32) {
	off, o := r.runAt(id)
	if o == 0 {
		return
	}
	k := int(o) - 1
	r.order[off] = 0
	r.held--
	for ; k < maxOrder; k++ {
		buddy := off ^ 1<<k
		if !r.bit(k, buddy) {
			break
		}
		r.setBit(k, buddy, false) // its entry in free goes stale
		off &^= 1 << k
	}
	r.push(k, off)
}

// size is how many slots the run at slot id holds; 0 if none starts there.
func (r *listRuns) size(id uint32) int {
	if _, o := r.runAt(id); o != 0 {
		return 1 << (o - 1)
	}
	return 0
}

// inUse is how many lists are held.
func (r *listRuns) inUse() int { return r.held }

func (r *listRuns) push(k int, off uint32) {
	r.setBit(k, off, true)
	r.free[k] = append(r.free[k], off)
	if len(r.free[k]) > int(r.total>>k)+64 {
		r.compact(k)
	}
}

func (r *listRuns) pop(k int) (uint32, bool) {
	for n := len(r.free[k]); n > 0; n-- {
		off := r.free[k][n-1]
		r.free[k] = r.free[k][:n-1]
		if r.bit(k, off) {
			r.setBit(k, off, false)
			return off, true
		}
	}
	return 0, false
}

// compact drops the stale entries of an order, and the second entry of a
// run freed, merged and freed again.
func (r *listRuns) compact(k int) {
	kept := r.free[k][:0]
	for _, off := range r.free[k] {
		if r.bit(k, off) {
			kept = append(kept, off)
			r.setBit(k, off, false) // a later duplicate finds it clear
		}
	}
	for _, off := range kept {
		r.setBit(k, off, true)
	}
	r.free[k] = slices.Clip(kept)
}

func (r *listRuns) bit(k int, off uint32) bool {
	i := off >> k
	return r.isFree[k][i/64]&(1<<(i%64)) != 0
}

func (r *listRuns) setBit(k int, off uint32, on bool) {
	i := off >> k
	if on {
		r.isFree[k][i/64] |= 1 << (i % 64)
	} else {
		r.isFree[k][i/64] &^= 1 << (i % 64)
	}
}

// listRun is a list as saved: its first slot and its run's size in slots.
type listRun struct {
	ID   uint32
	Size int
}

// take marks runs as held, in an allocator that has handed out none; the
// rest of the table is free again, split around them.
func (r *listRuns) take(runs []listRun) error {
	slices.SortFunc(runs, func(a, b listRun) int { return int(a.ID) - int(b.ID) })
	end := uint32(0)
	for _, run := range runs {
		k := bits.Len(uint(run.Size)) - 1
		off := run.ID - 1
		switch {
		case run.ID == 0 || k < 0 || k > maxOrder || run.Size != 1<<k:
			return fmt.Errorf("pdr list %d of %d slots: not a run", run.ID, run.Size)
		case off%(1<<k) != 0 || off+1<<k > r.total:
			return fmt.Errorf("pdr list %d of %d slots: not a run of the table's %d", run.ID, run.Size, r.total+1)
		case off < end:
			return fmt.Errorf("pdr list %d overlaps the list before it", run.ID)
		}
		end = off + 1<<k
		r.order[off] = uint8(k) + 1
	}
	r.held = len(runs)
	r.next = (end + 1<<maxOrder - 1) &^ (1<<maxOrder - 1)
	for off := uint32(0); off < r.next; off += 1 << maxOrder {
		r.freeAround(off, maxOrder)
	}
	return nil
}

// freeAround frees the parts of the run (off, k) that hold no list.
func (r *listRuns) freeAround(off uint32, k int) {
	if r.order[off] == uint8(k)+1 {
		return // held whole
	}
	if !slices.ContainsFunc(r.order[off:off+1<<k], func(o uint8) bool { return o != 0 }) {
		r.push(k, off)
		return
	}
	r.freeAround(off, k-1)
	r.freeAround(off+1<<(k-1), k-1)
}
