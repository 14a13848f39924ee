package api_test

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/sluice-upf/sluice/internal/api/apitest"
	"github.com/sluice-upf/sluice/internal/pfcp"
	"github.com/sluice-upf/sluice/internal/session"
)

// BenchmarkSessionPage is what a filtered page of the session list costs
// the API's goroutine, outside the serve loop, with 1,000,000 sessions: the
// loop's snapshot is filtered and the page kept in a heap. (What the loop
// spends is BenchmarkSessionsInTheLoop in internal/pfcp.)
//
//	go test -run - -bench SessionPage -benchmem ./internal/api/
func BenchmarkSessionPage(b *testing.B) {
	const n = 1_000_000
	snapshot := make([]*session.Session, n)
	for i := range uint64(n) {
		ue := netip.AddrFrom4([4]byte{10, 45 + byte(i>>16), byte(i >> 8), byte(i)})
		snapshot[i] = apitest.Open5GS(i+1, i, "198.18.4.1", ue.String(), uint32(0x100+i), uint32(0x200+i))
	}
	rand.Shuffle(n, func(i, j int) { snapshot[i], snapshot[j] = snapshot[j], snapshot[i] }) // a map's order
	for _, c := range []struct {
		name   string
		filter pfcp.SessionFilter
		after  uint64
	}{
		{"no filter, last page", pfcp.SessionFilter{}, n - 50},
		{"by peer", pfcp.SessionFilter{Peer: "198.18.4.1"}, 0},
		{"by UE", pfcp.SessionFilter{UE: netip.MustParseAddr("10.46.1.2")}, 0},
		{"by TEID", pfcp.SessionFilter{TEID: 0x5000, MatchTEID: true}, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if p := pfcp.PageOf(slices.Values(snapshot), c.filter, c.after, 100); p.Total == 0 {
					b.Fatalf("%s: nothing found", c.name)
				}
			}
		})
	}
}
