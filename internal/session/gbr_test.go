package session

import (
	"errors"
	"math"
	"net/netip"
	"testing"

	"github.com/sluice-upf/sluice/internal/saved"
)

const (
	mbit = 1_000_000
	cap1 = 10 * mbit // uplink capacity of gbrStore
	cap2 = 20 * mbit // downlink capacity
)

func gbrStore(capacity BitRates) *Store {
	return NewStore(Options{
		TEIDFirst: 0x100, TEIDLast: 0x1ff, AccessAddrs: []netip.Addr{n3},
		Pools: map[string][]netip.Prefix{"internet": {netip.MustParsePrefix("10.45.0.0/16")}}, MaxSessions: 10,
		GBRCapacity: capacity,
	})
}

func qer(id uint32, gbrUL, gbrDL uint64) QER {
	return QER{ID: id, GBRUL: gbrUL, GBRDL: gbrDL}
}

// withQERs is plain(cp), with a UE address of its own, whose uplink and
// downlink PDRs both use every one of qers.
func withQERs(cp uint64, qers ...QER) *Establish {
	r := plain(cp)
	a := netip.AddrFrom4([4]byte{10, 45, 1, byte(cp)})
	r.PDRs[0].PDI.UEIP = &UEIP{V4: a}
	r.PDRs[1].PDI.UEIP = &UEIP{V4: a, Dest: true}
	r.QERs = qers
	for _, q := range qers {
		r.PDRs[0].QERIDs = append(r.PDRs[0].QERIDs, q.ID)
		r.PDRs[1].QERIDs = append(r.PDRs[1].QERIDs, q.ID)
	}
	return r
}

// threePDRs adds to r an uplink PDR for QFI 5 on the same F-TEID, with
// the QERs of r's first.
func threePDRs(r *Establish) *Establish {
	p := r.PDRs[0]
	p.ID, p.Precedence, p.PDI.QFI = 3, 100, 5
	r.PDRs = append(r.PDRs, p)
	return r
}

// useQERs is Update PDR of both PDRs of withQERs: they use ids now.
func useQERs(ids ...uint32) []PDRUpdate {
	return []PDRUpdate{{ID: 1, QERIDs: ids, SetQERs: true}, {ID: 2, QERIDs: ids, SetQERs: true}}
}

func rate(v uint64) *uint64 { return &v }

// wantRefusal checks err for cause and offending IE.
func wantRefusal(t *testing.T, err error, cause uint8, ie uint16) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Cause != cause || e.IE != ie {
		t.Fatalf("got %v (%+v), want cause %d offending IE %d", err, e, cause, ie)
	}
}

// TestGBRAdmission: against a capacity of 10 Mbit/s up and 20 Mbit/s
// down, with one session holding 4 and 8 (SEID 1, QER 1), what a request
// gets, and what the admitted sum is after it.
func TestGBRAdmission(t *testing.T) {
	held := withQERs(1, qer(1, 4*mbit, 8*mbit))
	for _, c := range []struct {
		name    string
		noLimit bool // capacity 0
		req     Request
		cause   uint8 // 0: admitted
		ie      uint16
		want    BitRates
	}{
		{name: "a session up to the capacity", req: withQERs(2, qer(1, 6*mbit, 12*mbit)), want: BitRates{cap1, cap2}},
		{name: "a session over the uplink capacity", req: withQERs(2, qer(1, 6*mbit+1, 0)),
			cause: CauseNoResources, ie: IECreateQER, want: BitRates{4 * mbit, 8 * mbit}},
		{name: "a session over the downlink capacity alone", req: withQERs(2, qer(1, 0, 12*mbit+1)),
			cause: CauseNoResources, ie: IECreateQER, want: BitRates{4 * mbit, 8 * mbit}},
		{name: "the QERs of a session add up", req: withQERs(2, qer(1, 3*mbit, 0), qer(2, 3*mbit+1, 0)),
			cause: CauseNoResources, ie: IECreateQER, want: BitRates{4 * mbit, 8 * mbit}},
		{name: "a QER shared by three PDRs counts once", req: threePDRs(withQERs(2, qer(7, 6*mbit, 12*mbit))), want: BitRates{cap1, cap2}},
		{name: "no GBR, no admission", req: withQERs(2, QER{ID: 1, MBRUL: 100 * mbit}), want: BitRates{4 * mbit, 8 * mbit}},
		{name: "capacity 0 is no limit", noLimit: true, req: withQERs(2, qer(1, 1e15, 1e15)),
			want: BitRates{1e15 + 4*mbit, 1e15 + 8*mbit}},
		{name: "a sum beyond what a uint64 counts", noLimit: true,
			req:   withQERs(2, qer(1, math.MaxUint64-4*mbit, 0), qer(2, 1, 0)),
			cause: CauseNoResources, ie: IECreateQER, want: BitRates{4 * mbit, 8 * mbit}},
		{name: "a session's QERs beyond what a uint64 counts", noLimit: true,
			req:   withQERs(2, qer(1, 0, math.MaxUint64), qer(2, 0, 1)),
			cause: CauseNoResources, ie: IECreateQER, want: BitRates{4 * mbit, 8 * mbit}},
		{name: "an update up to the capacity", req: &Modify{SEID: 1, UpdateQERs: []QERUpdate{{ID: 1, GBRUL: rate(cap1), GBRDL: rate(cap2)}}},
			want: BitRates{cap1, cap2}},
		{name: "an update over the capacity", req: &Modify{SEID: 1, UpdateQERs: []QERUpdate{{ID: 1, GBRUL: rate(cap1 + 1), GBRDL: rate(0)}}},
			cause: CauseNoResources, ie: IEUpdateQER, want: BitRates{4 * mbit, 8 * mbit}},
		{name: "an update that lowers", req: &Modify{SEID: 1, UpdateQERs: []QERUpdate{{ID: 1, GBRUL: rate(mbit), GBRDL: rate(0)}}},
			want: BitRates{mbit, 0}},
		{name: "an update that changes no GBR", req: &Modify{SEID: 1, UpdateQERs: []QERUpdate{{ID: 1, QFI: new(uint8)}}},
			want: BitRates{4 * mbit, 8 * mbit}},
		{name: "a QER created over the capacity in a modification",
			req:   &Modify{SEID: 1, CreateQERs: []QER{qer(2, 6*mbit+1, 0)}, UpdatePDRs: useQERs(1, 2)},
			cause: CauseNoResources, ie: IECreateQER, want: BitRates{4 * mbit, 8 * mbit}},
		{name: "a QER removed and a larger one created in one request",
			req:  &Modify{SEID: 1, RemoveQERs: []uint32{1}, CreateQERs: []QER{qer(2, cap1, cap2)}, UpdatePDRs: useQERs(2)},
			want: BitRates{cap1, cap2}},
		{name: "a QER removed and one created over the capacity",
			req:   &Modify{SEID: 1, RemoveQERs: []uint32{1}, CreateQERs: []QER{qer(2, cap1+1, 0)}, UpdatePDRs: useQERs(2)},
			cause: CauseNoResources, ie: IECreateQER, want: BitRates{4 * mbit, 8 * mbit}},
		{name: "a QER removed", req: &Modify{SEID: 1, RemoveQERs: []uint32{1}, UpdatePDRs: useQERs()}, want: BitRates{}},
		{name: "the session deleted", req: &Delete{SEID: 1}, want: BitRates{}},
		{name: "GBR above MBR uplink", req: withQERs(2, QER{ID: 1, MBRUL: mbit, GBRUL: mbit + 1}),
			cause: CauseRuleFailure, ie: IEGBR, want: BitRates{4 * mbit, 8 * mbit}},
		{name: "GBR above MBR downlink", req: withQERs(2, QER{ID: 1, MBRUL: mbit, MBRDL: mbit, GBRDL: 2 * mbit}),
			cause: CauseRuleFailure, ie: IEGBR, want: BitRates{4 * mbit, 8 * mbit}},
		{name: "GBR equal to MBR", req: withQERs(2, QER{ID: 1, MBRUL: mbit, GBRUL: mbit, MBRDL: mbit, GBRDL: mbit}),
			want: BitRates{5 * mbit, 9 * mbit}},
		{name: "an MBR updated below the GBR", req: &Modify{SEID: 1, UpdateQERs: []QERUpdate{{ID: 1, MBRUL: rate(mbit), MBRDL: rate(100 * mbit)}}},
			cause: CauseRuleFailure, ie: IEGBR, want: BitRates{4 * mbit, 8 * mbit}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := gbrStore(BitRates{cap1, cap2})
			if c.noLimit {
				s = gbrStore(BitRates{})
			}
			first := commit(t, s, held)
			plan, err := s.Plan(c.req)
			if c.cause == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				s.Commit(plan)
			} else {
				wantRefusal(t, err, c.cause, c.ie)
				if got, _ := s.Get(first.Next.SEID); got != first.Next || s.Len() != 1 {
					t.Errorf("after a refusal: %d sessions, the first one changed: %v", s.Len(), got != first.Next)
				}
			}
			if got := s.AdmittedGBR(); got != c.want {
				t.Errorf("admitted %+v, want %+v", got, c.want)
			}
			if s.gbr.held != (BitRates{}) {
				t.Errorf("%+v still held after the request", s.gbr.held)
			}
		})
	}
}

// TestGBRFollowsTheSessions walks the sum through establishment,
// modification, deletion, a change planned and aborted (a failed datapath
// write), and two planned at once.
func TestGBRFollowsTheSessions(t *testing.T) {
	s := gbrStore(BitRates{cap1, cap2})
	want := func(step string, ul, dl uint64) {
		t.Helper()
		if got := s.AdmittedGBR(); got != (BitRates{ul, dl}) {
			t.Fatalf("%s: admitted %+v, want {UL:%d DL:%d}", step, got, ul, dl)
		}
	}
	a := commit(t, s, withQERs(1, qer(1, 4*mbit, 8*mbit), qer(2, mbit, 2*mbit))).Next.SEID
	b := commit(t, s, withQERs(2, qer(1, 3*mbit, 6*mbit))).Next.SEID
	want("two sessions", 8*mbit, 16*mbit)

	commit(t, s, &Modify{SEID: a, RemoveQERs: []uint32{2}, UpdatePDRs: useQERs(1)})
	want("a QER removed", 7*mbit, 14*mbit)

	commit(t, s, &Modify{SEID: b, UpdateQERs: []QERUpdate{{ID: 1, GBRUL: rate(5 * mbit), GBRDL: rate(mbit)}}})
	want("a QER updated", 9*mbit, 9*mbit)

	c, err := s.Plan(withQERs(3, qer(1, mbit, mbit)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Plan(withQERs(4, qer(1, mbit, 0)))
	wantRefusal(t, err, CauseNoResources, IECreateQER) // the first holds the last Mbit/s up
	s.Abort(c)
	want("a change aborted", 9*mbit, 9*mbit)
	commit(t, s, withQERs(4, qer(1, mbit, 0)))
	want("its GBR given to another", cap1, 9*mbit)

	commit(t, s, &Delete{SEID: b})
	want("a session deleted", 5*mbit, 8*mbit)
	commit(t, s, &Delete{SEID: a})
	want("another deleted", mbit, 0)
}

// TestGBRRestore: the sum is not saved but counted again from the
// sessions; restored under a lower capacity, what holds more than it is
// kept, growth is refused, and what lowers the sum goes through.
func TestGBRRestore(t *testing.T) {
	old := gbrStore(BitRates{cap1, cap2})
	a := commit(t, old, withQERs(1, qer(1, 4*mbit, 8*mbit))).Next.SEID
	commit(t, old, withQERs(2, qer(1, 3*mbit, 6*mbit), qer(2, 2*mbit, 0)))
	for _, c := range []struct {
		name     string
		capacity BitRates
		req      Request
		cause    uint8
		want     BitRates
	}{
		{"the same capacity", BitRates{cap1, cap2}, withQERs(3, qer(1, mbit, 0)), 0, BitRates{cap1, 14 * mbit}},
		{"a lower capacity refuses growth", BitRates{5 * mbit, 5 * mbit}, withQERs(3, qer(1, 0, 1)), CauseNoResources, BitRates{9 * mbit, 14 * mbit}},
		{"a lower capacity lets a session go", BitRates{5 * mbit, 5 * mbit}, &Delete{SEID: a}, 0, BitRates{5 * mbit, 6 * mbit}},
		{"a lower capacity lets a GBR come down", BitRates{5 * mbit, 5 * mbit},
			&Modify{SEID: a, UpdateQERs: []QERUpdate{{ID: 1, GBRUL: rate(3 * mbit), GBRDL: rate(8 * mbit)}}}, 0, BitRates{8 * mbit, 14 * mbit}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := gbrStore(c.capacity)
			restoreFrom(t, old, s)
			if got := s.AdmittedGBR(); got != old.AdmittedGBR() {
				t.Fatalf("restored %+v, want %+v", got, old.AdmittedGBR())
			}
			plan, err := s.Plan(c.req)
			if c.cause != 0 {
				wantRefusal(t, err, c.cause, IECreateQER)
			} else if err != nil {
				t.Fatal(err)
			} else {
				s.Commit(plan)
			}
			if got := s.AdmittedGBR(); got != c.want {
				t.Errorf("admitted %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestGBRAboveMBRJudgedOnChange: a QER the request leaves as it was is not
// judged again, so a session restored from an upfd that took GBR above MBR
// can still be modified; changing that QER is refused.
func TestGBRAboveMBRJudgedOnChange(t *testing.T) {
	s := gbrStore(BitRates{})
	r := withQERs(1, QER{ID: 1, MBRUL: mbit, GBRUL: 2 * mbit})
	x := &Session{SEID: 1, CPSEID: r.CPSEID, Peer: r.Peer}
	if err := addAll(x, r.PDRs, r.FARs, r.QERs, nil, nil); err != nil {
		t.Fatal(err)
	}
	s.adopt(x)
	commit(t, s, &Modify{SEID: 1, CreateQERs: []QER{qer(2, mbit, 0)}, UpdatePDRs: useQERs(1, 2)})
	_, err := s.Plan(&Modify{SEID: 1, UpdateQERs: []QERUpdate{{ID: 1, QFI: new(uint8(9))}}})
	wantRefusal(t, err, CauseRuleFailure, IEGBR)
}

// restoreFrom restores into what from saves, as across a restart of upfd.
func restoreFrom(t *testing.T, from, into *Store) {
	t.Helper()
	globals := saved.Append(nil, from.SaveGlobals())
	var sessions []saved.Raw
	for seid := range from.sessions {
		v, _ := from.SaveSession(seid)
		sessions = append(sessions, saved.Append(nil, v))
	}
	if err := into.Restore(globals, sessions); err != nil {
		t.Fatal(err)
	}
}
