package rules

import (
	"github.com/sluice-upf/sluice/internal/datapath"
	"slices"
	"testing"
)

// A pool restored from the slots in use hands out the gaps first, lowest
// first, then the slots above, and never one in use.
func TestSlotsTake(t *testing.T) {
	for _, c := range []struct {
		name     string
		n        uint32
		used     []uint32
		want     []uint32
		takeFail bool
	}{
		{name: "nothing in use", n: 4, want: []uint32{1, 2, 3}},
		{name: "gaps, then above", n: 8, used: []uint32{5, 2}, want: []uint32{1, 3, 4, 6, 7}},
		{name: "full", n: 4, used: []uint32{1, 2, 3}},
		{name: "a slot held twice", n: 4, used: []uint32{2, 2}, takeFail: true},
		{name: "beyond the table", n: 4, used: []uint32{4}, takeFail: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSlots(datapath.SlotFAR, c.n)
			if err := s.take(slices.Clone(c.used)); (err != nil) != c.takeFail {
				t.Fatalf("take: %v", err)
			}
			if c.takeFail {
				return
			}
			var got []uint32
			for id, ok := s.get(); ok; id, ok = s.get() {
				got = append(got, id)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("handed out %v, want %v", got, c.want)
			}
			if s.inUse() != int(c.n)-1 {
				t.Errorf("in use %d, want %d", s.inUse(), c.n-1)
			}
		})
	}
}
