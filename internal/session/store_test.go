package session

import (
	"cmp"
	"errors"
	"net/netip"
	"testing"
)

var (
	n3   = netip.MustParseAddr("198.18.3.2")
	gnb  = netip.MustParseAddr("198.18.3.1")
	ue   = netip.MustParseAddr("10.45.0.2")
	smf  = netip.MustParseAddr("198.18.4.1")
	ohr0 = uint8(0)
)

func newStore() *Store {
	return NewStore(Options{
		TEIDFirst: 0x100, TEIDLast: 0x1ff, AccessAddrs: []netip.Addr{n3},
		Pools: map[string][]netip.Prefix{"internet": {netip.MustParsePrefix("10.45.0.0/16")}}, MaxSessions: 3,
	})
}

// plain is what an SMF sends for a PDU session: uplink on a chosen F-TEID,
// downlink to the UE, one FAR each way.
func plain(cpSEID uint64) *Establish {
	return &Establish{
		Peer: "smf", CPSEID: cpSEID, CPAddr: smf,
		PDRs: []PDR{
			{ID: 1, Precedence: 200, FARID: 1, OHR: &ohr0, PDI: PDI{Source: Access, FTEID: &FTEID{Choose: true, ChooseV4: true, HasChID: true, ChooseID: 5}, UEIP: &UEIP{V4: ue}}},
			{ID: 2, Precedence: 200, FARID: 2, PDI: PDI{Source: Core, UEIP: &UEIP{V4: ue, Dest: true}}},
		},
		FARs: []FAR{
			{ID: 1, Action: ActForw, Forw: &Forwarding{Dest: Core}},
			{ID: 2, Action: ActForw, Forw: &Forwarding{Dest: Access, OHC: &OHC{TEID: 0x200, Peer: gnb}}},
		},
	}
}

func commit(t *testing.T, s *Store, r Request) *Change {
	t.Helper()
	c, err := s.Plan(r)
	if err != nil {
		t.Fatal(err)
	}
	s.Commit(c)
	return c
}

// ruleOf is the rule with id, which the test expects the set to hold.
func ruleOf[K cmp.Ordered, V rule[K]](t *testing.T, set RuleSet[K, V], id K) V {
	t.Helper()
	v, ok := set.Get(id)
	if !ok {
		t.Fatalf("no rule %v", id)
	}
	return v
}

func TestEstablishChoosesOneTEIDPerChooseID(t *testing.T) {
	s := newStore()
	r := plain(1)
	r.PDRs = append(r.PDRs, PDR{ID: 3, Precedence: 100, FARID: 1, OHR: &ohr0,
		PDI: PDI{Source: Access, QFI: 5, FTEID: &FTEID{Choose: true, HasChID: true, ChooseID: 5}}})
	c := commit(t, s, r)
	f1, f3 := ruleOf(t, c.Next.PDRs, 1).PDI.FTEID, ruleOf(t, c.Next.PDRs, 3).PDI.FTEID
	if f1.TEID != 0x100 || f1.V4 != n3 || *f3 != *f1 {
		t.Errorf("F-TEIDs %+v and %+v, want both 0x100 at %v", f1, f3, n3)
	}
	if len(c.Created) != 2 || c.Created[0].FTEID.TEID != 0x100 {
		t.Errorf("created %+v, want PDRs 1 and 3 with TEID 0x100", c.Created)
	}
}

func TestRefusals(t *testing.T) {
	ueTaken := plain(2)
	for _, c := range []struct {
		name  string
		edit  func(r *Establish)
		cause uint8
		ie    uint16
	}{
		{"FAR that does not exist", func(r *Establish) { r.PDRs[0].FARID = 9 }, CauseRuleFailure, IEFARID},
		{"QER that does not exist", func(r *Establish) { r.PDRs[0].QERIDs = []uint32{3} }, CauseRuleFailure, IEQERID},
		{"URR that does not exist", func(r *Establish) { r.PDRs[1].URRIDs = []uint32{4} }, CauseRuleFailure, IEURRID},
		{"PDR ID twice", func(r *Establish) { r.PDRs[1].ID = 1 }, CauseMandatoryIEIncorrect, IEPDRID},
		{"FAR ID twice", func(r *Establish) { r.FARs[1].ID = 1 }, CauseMandatoryIEIncorrect, IEFARID},
		{"no PDR", func(r *Establish) { r.PDRs = nil }, CauseMandatoryIEMissing, IECreatePDR},
		{"DROP and FORW at once", func(r *Establish) { r.FARs[0].Action = ActDrop | ActForw }, CauseMandatoryIEIncorrect, IEApplyAction},
		{"FORW without forwarding parameters", func(r *Establish) { r.FARs[0].Forw = nil }, CauseConditionalIEMissing, IEForwardingParams},
		{"outer header removal of UDP/IPv4", func(r *Establish) { two := uint8(2); r.PDRs[0].OHR = &two }, CauseRuleFailure, IEOuterHeaderRemoval},
		{"PDR matching nothing", func(r *Establish) { r.PDRs[1].PDI.UEIP = nil }, CauseRuleFailure, IEPDI},
		{"F-TEID that is not ours", func(r *Establish) {
			r.PDRs[0].PDI.FTEID = &FTEID{TEID: 0x150, V4: netip.MustParseAddr("198.18.3.9")}
		}, CauseInvalidFTEIDAlloc, IEFTEID},
		{"UE address of another session", func(r *Establish) { *r = *ueTaken }, CauseRuleFailure, IEUEIPAddress},
		{"CP F-SEID already in use", func(r *Establish) { r.CPSEID = 1 }, CauseRequestRejected, IEFSEID},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStore()
			first := commit(t, s, plain(1))
			r := plain(7)
			r.PDRs[0].PDI.UEIP = &UEIP{V4: netip.MustParseAddr("10.45.0.7")}
			r.PDRs[1].PDI.UEIP = &UEIP{V4: netip.MustParseAddr("10.45.0.7"), Dest: true}
			c.edit(r)
			_, err := s.Plan(r)
			var e *Error
			if !errors.As(err, &e) || e.Cause != c.cause || e.IE != c.ie {
				t.Fatalf("got %v (%+v), want cause %d offending IE %d", err, e, c.cause, c.ie)
			}
			if s.Len() != 1 || len(s.teids) != 1 || len(s.ues) != 1 {
				t.Errorf("after a refusal: %d sessions, %d TEIDs, %d UE addresses held; want the first session's only", s.Len(), len(s.teids), len(s.ues))
			}
			if got, _ := s.Get(first.Next.SEID); got != first.Next {
				t.Errorf("the first session changed")
			}
		})
	}
}

func TestModify(t *testing.T) {
	s := newStore()
	est := commit(t, s, plain(1))
	seid := est.Next.SEID
	gnb2 := netip.MustParseAddr("198.18.3.11")

	// Path switch: the downlink FAR gets a new gNB tunnel and an End Marker.
	c := commit(t, s, &Modify{SEID: seid, UpdateFARs: []FARUpdate{{ID: 2, Forw: &ForwardingUpdate{OHC: &OHC{TEID: 0x300, Peer: gnb2}, EndMarker: true}}}})
	if f := ruleOf(t, c.Next.FARs, 2).Forw; f.OHC.Peer != gnb2 || !f.EndMarker || f.Dest != Access {
		t.Errorf("forwarding after the switch %+v", f)
	}
	if ruleOf(t, c.Prev.FARs, 2).Forw.OHC.Peer != gnb {
		t.Errorf("the previous session changed")
	}

	// A dedicated flow: a new PDR with an SDF and a new QER.
	flow, _ := ParseFlow("permit out 17 from 198.18.7.0/24 to assigned")
	c = commit(t, s, &Modify{SEID: seid,
		CreateQERs: []QER{{ID: 3, QFI: 5}},
		CreatePDRs: []PDR{{ID: 5, Precedence: 10, FARID: 2, QERIDs: []uint32{3}, PDI: PDI{Source: Core, UEIP: &UEIP{V4: ue, Dest: true}, SDFs: []SDF{{Flow: flow}}}}}})
	if c.Next.PDRs.Len() != 3 {
		t.Errorf("%d PDRs after adding one", c.Next.PDRs.Len())
	}

	// Removing the uplink PDR frees its TEID.
	commit(t, s, &Modify{SEID: seid, RemovePDRs: []uint16{1}})
	if _, held := s.teids[0x100]; held {
		t.Errorf("TEID 0x100 still held after its PDR was removed")
	}
	for _, bad := range []*Modify{
		{SEID: 999},
		{SEID: seid, RemoveFARs: []uint32{2}}, // PDRs 2 and 5 still use it
		{SEID: seid, UpdateQERs: []QERUpdate{{ID: 9}}},
	} {
		if _, err := s.Plan(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestDeleteFreesEverything(t *testing.T) {
	s := newStore()
	c := commit(t, s, plain(1))
	commit(t, s, &Delete{SEID: c.Next.SEID})
	if s.Len() != 0 || len(s.teids) != 0 || len(s.ues) != 0 || len(s.byCP) != 0 {
		t.Errorf("after deletion: %d sessions, %d TEIDs, %d UE addresses, %d CP SEIDs", s.Len(), len(s.teids), len(s.ues), len(s.byCP))
	}
	if _, err := s.Plan(&Delete{SEID: c.Next.SEID}); err == nil || err.(*Error).Cause != CauseNoSession {
		t.Errorf("deleting twice: %v", err)
	}
}

func TestAbortReleasesReservations(t *testing.T) {
	s := newStore()
	c, err := s.Plan(plain(1))
	if err != nil {
		t.Fatal(err)
	}
	s.Abort(c)
	if len(s.teids) != 0 || len(s.ues) != 0 || s.Len() != 0 {
		t.Errorf("an aborted plan left %d TEIDs, %d UE addresses, %d sessions", len(s.teids), len(s.ues), s.Len())
	}
}

func TestChooseUEAddress(t *testing.T) {
	s := newStore()
	r := plain(1)
	r.PDRs[0].PDI.NetworkInstance = "internet"
	r.PDRs[0].PDI.UEIP = &UEIP{ChooseV4: true}
	r.PDRs[1].PDI.NetworkInstance = "internet"
	r.PDRs[1].PDI.UEIP = &UEIP{ChooseV4: true, Dest: true}
	c := commit(t, s, r)
	a, b := ruleOf(t, c.Next.PDRs, 1).PDI.UEIP, ruleOf(t, c.Next.PDRs, 2).PDI.UEIP
	if a.V4 != netip.MustParseAddr("10.45.0.1") || b.V4 != a.V4 || !b.Dest || a.Dest {
		t.Errorf("UE addresses %+v and %+v, want 10.45.0.1 for both, as source and as destination", a, b)
	}
}

func TestMaxSessions(t *testing.T) {
	s := newStore()
	for i := range 3 {
		r := plain(uint64(i + 1))
		a := netip.AddrFrom4([4]byte{10, 45, 1, byte(i)})
		r.PDRs[0].PDI.UEIP, r.PDRs[1].PDI.UEIP = &UEIP{V4: a}, &UEIP{V4: a, Dest: true}
		commit(t, s, r)
	}
	if _, err := s.Plan(plain(9)); err == nil || err.(*Error).Cause != CauseNoResources {
		t.Errorf("a fourth session over a maximum of 3: %v", err)
	}
}

// max_pdrs_per_session: a session with more PDRs is refused as a whole,
// naming Create PDR, and nothing it reserved stays taken.
func TestMaxPDRs(t *testing.T) {
	s := newStore()
	s.opts.MaxPDRs = 1
	_, err := s.Plan(plain(1))
	if e, ok := err.(*Error); !ok || e.Cause != CauseNoResources || e.IE != IECreatePDR {
		t.Fatalf("a session of 2 PDRs over a maximum of 1: %v", err)
	}
	if len(s.teids) != 0 || len(s.ues) != 0 {
		t.Errorf("the refused session left TEIDs %v and UE addresses %v taken", s.teids, s.ues)
	}
	s.opts.MaxPDRs = 2
	commit(t, s, plain(1))
}
