package tgen

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestSpecValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Spec)
		want string // in the error; "" for none
	}{
		{"the test spec", func(*Spec) {}, ""},
		{"no direction", func(s *Spec) { s.Direction = 0 }, "direction"},
		{"no sessions", func(s *Spec) { s.Sessions = nil }, "no sessions"},
		{"UE addresses of two families", func(s *Spec) { s.Sessions[1].UE = netip.MustParseAddr("2001:db8::1") }, "one family"},
		{"too small for the stamp", func(s *Spec) { s.Size = 51 }, "size 51"},
		{"IMIX", func(s *Spec) { s.Mix = IMIX }, ""},
		{"IMIX over IPv6: 64 bytes cannot hold the stamp", func(s *Spec) { *s = testSpec(Uplink, true); s.Mix = IMIX }, "size 64"},
		{"five sizes", func(s *Spec) { s.Mix = slices.Repeat([]Weighted{{Size: 100, Weight: 1}}, 5) }, "5 sizes"},
		{"a weight of nothing", func(s *Spec) { s.Mix = []Weighted{{Size: 100, Weight: 0}} }, "weighs 0"},
		{"uplink without a UPF address", func(s *Spec) { s.UPF = netip.Addr{} }, "uplink needs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testSpec(Uplink, false)
			c.edit(&s)
			err := s.validate()
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
}

// A mix is sent in proportion, spread out rather than in runs.
func TestMixOrder(t *testing.T) {
	s := Spec{Mix: IMIX}
	sizes, order := s.sizes()
	if !slices.Equal(sizes, []int{64, 576, 1500}) || len(order) != 12 {
		t.Fatalf("sizes %v, order %v", sizes, order)
	}
	count := map[uint8]int{}
	for i, c := range order {
		count[c]++
		if i > 0 && c != 0 && c == order[i-1] {
			t.Errorf("order %v: size %d twice in a row", order, c)
		}
	}
	if count[0] != 7 || count[1] != 4 || count[2] != 1 {
		t.Errorf("order %v: want 7:4:1", order)
	}
}
