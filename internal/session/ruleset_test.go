package session

import (
	"slices"
	"testing"
)

func TestRuleSetKeepsIDOrder(t *testing.T) {
	var fars RuleSet[uint32, FAR]
	for _, id := range []uint32{5, 1, 3} {
		fars.Put(FAR{ID: id})
	}
	fars.Put(FAR{ID: 3, Action: ActDrop})
	if got := slices.Collect(fars.IDs()); !slices.Equal(got, []uint32{1, 3, 5}) {
		t.Errorf("IDs %v, want 1 3 5", got)
	}
	if f, ok := fars.Get(3); !ok || f.Action != ActDrop {
		t.Errorf("FAR 3 is %+v, %v: want it replaced", f, ok)
	}
	if !fars.Delete(1) || fars.Delete(1) || fars.Has(1) || fars.Len() != 2 {
		t.Errorf("deleting FAR 1: %v left", slices.Collect(fars.IDs()))
	}
	if _, ok := fars.Get(4); ok {
		t.Error("FAR 4 found")
	}
}

// A session is never changed in place: what its clone does, with room to
// spare or without, must not show in it.
func TestRuleSetCloneChangesApart(t *testing.T) {
	var orig RuleSet[uint16, PDR]
	orig.Grow(8)
	orig.Put(PDR{ID: 2, Precedence: 20})
	orig.Put(PDR{ID: 4, Precedence: 40})
	c := orig.Clone()
	c.Put(PDR{ID: 3})
	c.Put(PDR{ID: 2, Precedence: 21})
	c.Delete(4)
	d := orig.Clone()
	d.Grow(4)
	d.Put(PDR{ID: 1})
	var precedences []uint32
	for _, p := range orig.All() {
		precedences = append(precedences, p.Precedence)
	}
	if !slices.Equal(precedences, []uint32{20, 40}) {
		t.Errorf("original's precedences %v after its clones changed, want 20 40", precedences)
	}
	if got := slices.Collect(c.IDs()); !slices.Equal(got, []uint16{2, 3}) {
		t.Errorf("clone has %v, want 2 3", got)
	}
}
