package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-upf/sluice/internal/saved"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

var (
	n3  = netip.MustParseAddr("198.18.3.2")
	gnb = netip.MustParseAddr("198.18.3.1")
	ue  = netip.MustParseAddr("10.45.0.2")
)

func newCompiler() *Compiler {
	return NewCompiler(Interfaces{Endpoints: []netip.Addr{n3}, Access: []netip.Addr{n3}}, datapath.SizesFor(1024))
}

func u8(v uint8) *uint8 { return &v }

// pduSession is session 0x7 of an SMF: uplink TEID 0x100, downlink to the
// UE through the gNB's TEID 0x200 with QFI 9, one URR both ways.
func pduSession() *session.Session {
	s := &session.Session{SEID: 7}
	s.PDRs.Put(session.PDR{ID: 1, Precedence: 200, FARID: 1, URRIDs: []uint32{1}, OHR: u8(0),
		PDI: session.PDI{Source: session.Access, FTEID: &session.FTEID{TEID: 0x100, V4: n3}, UEIP: &session.UEIP{V4: ue}}})
	s.PDRs.Put(session.PDR{ID: 2, Precedence: 200, FARID: 2, QERIDs: []uint32{1}, URRIDs: []uint32{1},
		PDI: session.PDI{Source: session.Core, UEIP: &session.UEIP{V4: ue, Dest: true}}})
	s.FARs.Put(session.FAR{ID: 1, Action: session.ActForw, Forw: &session.Forwarding{Dest: session.Core}})
	s.FARs.Put(session.FAR{ID: 2, Action: session.ActForw, Forw: &session.Forwarding{Dest: session.Access, OHC: &session.OHC{TEID: 0x200, Peer: gnb}}})
	s.QERs.Put(session.QER{ID: 1, QFI: 9})
	s.URRs.Put(session.URR{ID: 1, Method: session.MeasVolume})
	return s
}

// ops renders a plan's operations in datapath order, one per line, then
// the slots it gives back.
func ops(p *Plan) string {
	var b strings.Builder
	for _, phase := range []func(datapath.Op) bool{
		func(o datapath.Op) bool { _, ok := o.(datapath.PutFAR); return ok },
		func(o datapath.Op) bool { _, ok := o.(datapath.PutQER); return ok },
		func(o datapath.Op) bool { _, ok := o.(datapath.PutURR); return ok },
		func(o datapath.Op) bool { _, ok := o.(datapath.PutUplink); return ok },
		func(o datapath.Op) bool { _, ok := o.(datapath.PutDownlink); return ok },
		func(o datapath.Op) bool {
			switch o.(type) {
			case datapath.DelUplink, datapath.DelDownlink:
				return true
			}
			return false
		},
	} {
		var lines []string
		for _, o := range p.Ops {
			if phase(o) {
				lines = append(lines, describe(o))
			}
		}
		slices.Sort(lines)
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	// Then the slots given back once the datapath no longer points at them.
	var frees []string
	for _, h := range p.freeSlots {
		frees = append(frees, fmt.Sprintf("free %s %d", strings.ToLower(h.pool.name), h.id))
	}
	for _, l := range p.freeLists {
		frees = append(frees, fmt.Sprintf("free pdr list %d", l))
	}
	slices.Sort(frees)
	for _, l := range frees {
		b.WriteString(l + "\n")
	}
	return b.String()
}

func describe(o datapath.Op) string {
	switch o := o.(type) {
	case datapath.PutUplink:
		return fmt.Sprintf("uplink %#x: %s", o.Key.TEID, pdrs(o.Rules))
	case datapath.PutDownlink:
		return fmt.Sprintf("downlink %s: %s", o.UE, pdrs(o.Rules))
	}
	return o.String()
}

func pdrs(r datapath.Rules) string {
	var parts []string
	for _, p := range r.PDRs {
		s := fmt.Sprintf("pdr %d far %d", p.ID, p.FARID)
		switch {
		case p.SDFID != 0:
			s += fmt.Sprintf(" sdf %d(%v>%v)", p.SDFID, p.Filter.Src, p.Filter.Dst)
		case p.Filter.Src.IsValid(): // an IPv4 source alone, inline
			s += fmt.Sprintf(" from %v", p.Filter.Src)
		}
		parts = append(parts, s)
	}
	if r.ListID != 0 {
		return fmt.Sprintf("list %d [%s]", r.ListID, strings.Join(parts, ", "))
	}
	return strings.Join(parts, ", ")
}

func plan(t *testing.T, c *Compiler, s *session.Session) *Plan {
	t.Helper()
	seid := uint64(7)
	p, err := c.Plan(seid, s)
	if err != nil {
		t.Fatal(err)
	}
	c.Commit(p)
	return p
}

// restored is a new compiler restored from what c saved, as across a
// restart of upfd, with s as the store's session 7.
func restored(t *testing.T, c *Compiler, s *session.Session) *Compiler {
	t.Helper()
	marshal := func(v any, _ bool) saved.Raw { return saved.Append(nil, v) }
	var sessions, lists []saved.Raw
	for seid := range c.installed {
		sessions = append(sessions, marshal(c.SaveSession(seid)))
	}
	for key := range c.Lists {
		lists = append(lists, marshal(c.SaveList(key)))
	}
	r := newCompiler()
	if err := r.Restore(sessions, lists, func(seid uint64) (*session.Session, bool) { return s, seid == 7 }); err != nil {
		t.Fatal(err)
	}
	return r
}

func check(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n%s\nwant:\n%s", what, got, want)
	}
}

func TestEstablishThenSwitchPathThenDelete(t *testing.T) {
	c := newCompiler()
	s := pduSession()
	check(t, "establishment", ops(plan(t, c, s)), `install far 1 of session 0x7
install far 2 of session 0x7
install qer 1 of session 0x7
install urr 1 of session 0x7
uplink 0x100: pdr 1 far 1 from 10.45.0.2/32
downlink 10.45.0.2/32: pdr 2 far 2
`)

	// Handover: the downlink FAR gets a new tunnel, so a new slot, and the
	// old one is freed only after the entry points at the new one.
	next := s.Clone()
	next.FARs.Put(session.FAR{ID: 2, Action: session.ActForw,
		Forw: &session.Forwarding{Dest: session.Access, OHC: &session.OHC{TEID: 0x300, Peer: netip.MustParseAddr("198.18.3.11")}}})
	p := plan(t, c, next)
	check(t, "path switch", ops(p), `install far 3 of session 0x7
downlink 10.45.0.2/32: pdr 2 far 3
free far 2
`)
	if len(p.Undo) != 1 || describe(p.Undo[0]) != "downlink 10.45.0.2/32: pdr 2 far 2" {
		t.Errorf("undo %v, want the downlink entry back on FAR slot 2", p.Undo)
	}

	check(t, "the same session again", ops(plan(t, c, next)), "")

	// A dedicated flow ahead of the default downlink PDR: a list.
	flow, _ := session.ParseFlow("permit out 17 from 198.18.7.0/24 to assigned")
	ded := next.Clone()
	ded.PDRs.Put(session.PDR{ID: 3, Precedence: 10, FARID: 2, PDI: session.PDI{Source: session.Core,
		UEIP: &session.UEIP{V4: ue, Dest: true}, SDFs: []session.SDF{{Flow: flow}}}})
	check(t, "dedicated flow", ops(plan(t, c, ded)), `downlink 10.45.0.2/32: list 1 [pdr 3 far 3 from 198.18.7.0/24, pdr 2 far 3]
`)

	check(t, "deletion", ops(plan(t, c, nil)), `remove downlink 10.45.0.2/32
remove uplink teid 0x100
free far 1
free far 3
free pdr list 1
free qer 1
free urr 1
`)
	for name, pool := range map[string]interface{ inUse() int }{"far": c.farSlots, "qer": c.qerSlots, "urr": c.urrSlots, "sdf": c.sdfSlots, "list": c.listRuns} {
		if pool.inUse() != 0 {
			t.Errorf("%d %s slots still held after deletion", pool.inUse(), name)
		}
	}
}

// A filter takes an SDF slot only for what its PDR cannot carry inline:
// an IPv4 source prefix alone (the UE's address on uplink, a remote
// network on downlink) goes in the PDR, as protocol and ports do.
func TestSDFSlotOnlyForWhatThePDRCannotCarry(t *testing.T) {
	flow := func(rule string) []session.SDF {
		f, err := session.ParseFlow(rule)
		if err != nil {
			t.Fatal(err)
		}
		return []session.SDF{{Flow: f}}
	}
	v6 := netip.MustParsePrefix("2001:db8:45::/64")
	for _, c := range []struct {
		name  string
		edit  func(up, down *session.PDR)
		want  string // the lookup entry the edit changes
		slots int
	}{
		{"UE IPv4 address as the uplink source (free5GC, OAI)", func(up, down *session.PDR) {},
			"uplink 0x100: pdr 1 far 1 from 10.45.0.2/32", 0},
		{"UE IPv4 and IPv6 addresses as the uplink source (Open5GS)", func(up, down *session.PDR) { up.PDI.UEIP.V6 = v6 },
			"uplink 0x100: list 1 [pdr 1 far 1 from 10.45.0.2/32, pdr 1 far 1 sdf 1(2001:db8:45::/64>invalid Prefix)]", 1},
		{"uplink flow to a remote host", func(up, down *session.PDR) { up.PDI.SDFs = flow("permit out 17 from 198.18.7.10 to assigned") },
			"uplink 0x100: pdr 1 far 1 sdf 1(10.45.0.2/32>198.18.7.10/32)", 1},
		{"uplink flow from any remote port 5060", func(up, down *session.PDR) { up.PDI.SDFs = flow("permit out 17 from any 5060 to assigned") },
			"uplink 0x100: pdr 1 far 1 from 10.45.0.2/32", 0},
		{"downlink flow from a remote IPv4 network", func(up, down *session.PDR) {
			down.PDI.SDFs = flow("permit out 17 from 198.18.7.0/24 5060 to assigned")
		}, "downlink 10.45.0.2/32: pdr 2 far 2 from 198.18.7.0/24", 0},
		{"downlink flow from a remote IPv6 network", func(up, down *session.PDR) {
			down.PDI.UEIP.V4, down.PDI.UEIP.V6 = netip.Addr{}, v6
			down.PDI.SDFs = flow("permit out 17 from 2001:db8:7::/48 to assigned")
		}, "downlink 2001:db8:45::/64: pdr 2 far 2 sdf 1(2001:db8:7::/48>invalid Prefix)", 1},
		{"downlink ToS", func(up, down *session.PDR) { down.PDI.SDFs = []session.SDF{{TOS: 0xb8, TOSMask: 0xfc}} },
			"downlink 10.45.0.2/32: pdr 2 far 2 sdf 1(invalid Prefix>invalid Prefix)", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := pduSession()
			up, _ := s.PDRs.Get(1)
			down, _ := s.PDRs.Get(2)
			ul, dl := *up.PDI.UEIP, *down.PDI.UEIP
			up.PDI.UEIP, down.PDI.UEIP = &ul, &dl
			c.edit(&up, &down)
			s.PDRs.Put(up)
			s.PDRs.Put(down)
			cc := newCompiler()
			if got := ops(plan(t, cc, s)); !strings.Contains(got, c.want+"\n") {
				t.Errorf("establishment:\n%s\nwant a line %q", got, c.want)
			}
			// Across a restart, the restored compiler replays the same slots.
			r := restored(t, cc, s)
			for what, held := range map[string]int{"held": cc.sdfSlots.inUse(), "restored": r.sdfSlots.inUse()} {
				if held != c.slots {
					t.Errorf("%d SDF slots %s, want %d", held, what, c.slots)
				}
			}
			if got := strings.Count(ops(plan(t, r, nil)), "free sdf "); got != c.slots || r.sdfSlots.inUse() != 0 {
				t.Errorf("deletion freed %d SDF slots, leaving %d held; want %d freed", got, r.sdfSlots.inUse(), c.slots)
			}
		})
	}
}

func TestUplinkFlowIsMirrored(t *testing.T) {
	c := newCompiler()
	s := pduSession()
	flow, _ := session.ParseFlow("permit out 6 from 198.18.7.10 80,443 to assigned 40000")
	p, _ := s.PDRs.Get(1)
	p.PDI.SDFs = []session.SDF{{Flow: flow}}
	s.PDRs.Put(p)
	pl := plan(t, c, s)
	for _, o := range pl.Ops {
		up, ok := o.(datapath.PutUplink)
		if !ok {
			continue
		}
		if len(up.Rules.PDRs) != 2 {
			t.Fatalf("%d datapath PDRs, want one per remote port", len(up.Rules.PDRs))
		}
		f := up.Rules.PDRs[0].Filter
		want := datapath.SDF{Proto: 6, Src: netip.MustParsePrefix("10.45.0.2/32"), Dst: netip.MustParsePrefix("198.18.7.10/32"),
			SrcPorts: datapath.PortRange{Lo: 40000, Hi: 40000}, DstPorts: datapath.PortRange{Lo: 80, Hi: 80}}
		if f != want {
			t.Errorf("uplink filter %+v\nwant %+v", f, want)
		}
	}
}

// "ip" with ports means the ports of TCP, UDP and SCTP: the datapath's
// range starts at 1, as a packet without ports shows port 0 there.
func TestAnyProtocolPortsSkipPortZero(t *testing.T) {
	c := newCompiler()
	s := pduSession()
	flow, err := session.ParseFlow("permit out ip from any 0-1023 to assigned 81")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.PDRs.Get(2)
	p.PDI.SDFs = []session.SDF{{Flow: flow}}
	s.PDRs.Put(p)
	found := false
	for _, o := range plan(t, c, s).Ops {
		if down, ok := o.(datapath.PutDownlink); ok {
			found = true
			f := down.Rules.PDRs[0].Filter
			if f.SrcPorts != (datapath.PortRange{Lo: 1, Hi: 1023}) || f.DstPorts != (datapath.PortRange{Lo: 81, Hi: 81}) {
				t.Errorf("downlink ports %+v to %+v, want 1-1023 to 81", f.SrcPorts, f.DstPorts)
			}
		}
	}
	if !found {
		t.Fatal("no downlink lookup in the plan")
	}
}

func TestTooManyQERsIsRefusedAndNothingIsHeld(t *testing.T) {
	c := newCompiler()
	s := pduSession()
	s.QERs.Put(session.QER{ID: 2})
	s.QERs.Put(session.QER{ID: 3})
	p, _ := s.PDRs.Get(2)
	p.QERIDs = []uint32{1, 2, 3}
	s.PDRs.Put(p)
	_, err := c.Plan(7, s)
	e, ok := err.(*session.Error)
	if !ok || e.Cause != session.CauseRuleFailure || e.IE != session.IEQERID {
		t.Fatalf("error %v, want rule creation failure on QER ID", err)
	}
	if c.farSlots.inUse()+c.qerSlots.inUse()+c.urrSlots.inUse()+c.sdfSlots.inUse() != 0 {
		t.Errorf("a refused plan kept slots")
	}
}
