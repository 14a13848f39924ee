package pfcp

import (
	"math"
	"net/netip"
	"slices"
	"testing"

	"github.com/sluice-upf/sluice/internal/session"
)

// storeOf is a store with n sessions, SEIDs 1..n, each with a UE address
// and a local F-TEID, less those drop says go.
func storeOf(tb testing.TB, n int, drop func(seid uint64) bool) *session.Store {
	tb.Helper()
	n3 := netip.MustParseAddr("198.18.3.2")
	store := session.NewStore(session.Options{TEIDFirst: 0x100, TEIDLast: 0xffffffff, AccessAddrs: []netip.Addr{n3},
		Pools: map[string][]netip.Prefix{"": {netip.MustParsePrefix("10.0.0.0/8")}}, MaxSessions: n})
	for i := range n {
		ue := &session.UEIP{ChooseV4: true}
		req := &session.Establish{Peer: "smf", CPSEID: uint64(i),
			PDRs: []session.PDR{
				{ID: 1, Precedence: 1, FARID: 1, PDI: session.PDI{Source: session.Access, FTEID: &session.FTEID{Choose: true}, UEIP: ue}},
			},
			FARs: []session.FAR{{ID: 1, Action: session.ActDrop}},
		}
		c, err := store.Plan(req)
		if err != nil {
			tb.Fatal(err)
		}
		store.Commit(c)
	}
	for seid := uint64(1); seid <= uint64(n); seid++ {
		if drop(seid) {
			c, err := store.Plan(&session.Delete{SEID: seid})
			if err != nil {
				tb.Fatal(err)
			}
			store.Commit(c)
		}
	}
	return store
}

func seidsOf(xs []*session.Session) []uint64 {
	out := []uint64{}
	for _, x := range xs {
		out = append(out, x.SEID)
	}
	return out
}

func TestProbedPagesAreTheScannedPages(t *testing.T) {
	for _, c := range []struct {
		name string
		drop func(uint64) bool
		// fast: cursor -> whether the first page of 7 after it is found
		// by probing alone.
		fast map[uint64]bool
	}{
		{"dense", func(uint64) bool { return false }, map[uint64]bool{0: true, 100: true, 293: false, 300: false}},
		{"every other deleted", func(s uint64) bool { return s%2 == 0 }, map[uint64]bool{0: true, 283: true, 287: false}},
		{"a gap wider than the probes", func(s uint64) bool { return s > 10 && s < 250 }, map[uint64]bool{0: true, 5: false, 10: false, 250: true}},
		{"all deleted", func(uint64) bool { return true }, map[uint64]bool{0: false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Server{store: storeOf(t, 300, c.drop)}
			for _, after := range []uint64{0, 1, 5, 10, 100, 149, 250, 283, 287, 293, 299, 300, math.MaxUint64 - 3, math.MaxUint64} {
				for _, limit := range []int{1, 7, 100} {
					want := PageOf(s.store.Sessions, SessionFilter{}, after, limit)
					got, ok := s.probePage(after, limit)
					if fast, pinned := c.fast[after]; pinned && limit == 7 && ok != fast {
						t.Errorf("after %d, limit %d: probed alone %v, want %v", after, limit, ok, fast)
					}
					if !ok {
						continue
					}
					if !slices.Equal(seidsOf(got.Sessions), seidsOf(want.Sessions)) || got.More != want.More || got.Total != want.Total {
						t.Errorf("after %d, limit %d: probed %v more %v total %d; scanned %v more %v total %d", after, limit,
							seidsOf(got.Sessions), got.More, got.Total, seidsOf(want.Sessions), want.More, want.Total)
					}
				}
			}
		})
	}
}

func TestPageFilters(t *testing.T) {
	store := storeOf(t, 50, func(s uint64) bool { return s == 3 })
	x2, _ := store.Get(2)
	p2, _ := x2.PDRs.Get(1)
	ue, teid := p2.PDI.UEIP.V4, p2.PDI.FTEID.TEID
	for _, c := range []struct {
		name   string
		filter SessionFilter
		want   []uint64
	}{
		{"by UE", SessionFilter{UE: ue}, []uint64{2}},
		{"by local TEID", SessionFilter{TEID: teid, MatchTEID: true}, []uint64{2}},
		{"by peer", SessionFilter{Peer: "smf"}, []uint64{1, 2, 4, 5, 6}},
		{"by another peer", SessionFilter{Peer: "other"}, []uint64{}},
		{"by a TEID nobody has", SessionFilter{TEID: 7, MatchTEID: true}, []uint64{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := PageOf(store.Sessions, c.filter, 0, 5)
			if got := seidsOf(p.Sessions); !slices.Equal(got, c.want) {
				t.Errorf("sessions %v, want %v", got, c.want)
			}
		})
	}
}

// BenchmarkSessionsInTheLoop is what the serve loop spends on a page of
// 100 with 1,000,000 sessions: probing (an unfiltered page), and the
// snapshot of every session that a filtered page or the last one takes.
//
//	go test -run - -bench SessionsInTheLoop -benchmem ./internal/pfcp/
func BenchmarkSessionsInTheLoop(b *testing.B) {
	s := &Server{store: storeOf(b, 1_000_000, func(seid uint64) bool { return seid%10 == 0 })}
	b.Run("probed page", func(b *testing.B) {
		for b.Loop() {
			if _, ok := s.probePage(500_000, 100); !ok {
				b.Fatal("not found by probing")
			}
		}
	})
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			s.snapshot()
		}
	})
}
