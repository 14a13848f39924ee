package rules

import (
	"slices"
	"testing"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
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
			s := newSlots("FAR", c.n)
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

// A URR whose time quota ran out lets nothing through until a new grant:
// across a change of another rule, and across a restart; a new grant,
// even of the same size, lifts it.
func TestSpentTimeQuotaLastsUntilANewGrant(t *testing.T) {
	c := newCompiler()
	s := pduSession()
	plan(t, c, s)
	op, ok := c.SpendTimeQuota(7, 1)
	if !ok || op.String() != "install urr 1 of session 0x7" || !op.(datapath.PutURR).URR.HasQuota || op.(datapath.PutURR).URR.Quota != 0 {
		t.Fatalf("spend: %v %+v, want URR slot 1 rewritten with a quota of 0", ok, op)
	}
	if _, again := c.SpendTimeQuota(7, 1); again {
		t.Errorf("spent twice")
	}

	gate := s.Clone()
	gate.QERs.Put(session.QER{ID: 1, QFI: 9, GateDL: session.GateClosed})
	check(t, "a gate closed, the quota still spent", ops(plan(t, c, gate)), "install qer 2 of session 0x7\ndownlink 10.45.0.2/32: pdr 2 far 2\nfree qer 1\n")

	r := restored(t, c, gate)
	if _, again := r.SpendTimeQuota(7, 1); again {
		t.Errorf("restored: the quota is not spent")
	}
	if slot, _ := r.URRSlots(7)[1]; slot != 1 {
		t.Errorf("restored: URR 1 in slot %d, want 1", slot)
	}

	grant := gate.Clone()
	u, _ := grant.URRs.Get(1)
	u.Grant++
	grant.URRs.Put(u)
	p := plan(t, r, grant)
	check(t, "a new grant", ops(p), "install urr 1 of session 0x7\n")
	if put := p.Ops[0].(datapath.PutURR); put.URR.HasQuota {
		t.Errorf("after a new grant the URR is %+v, want no quota", put.URR)
	}
}
