package metrics

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/pfcp"
)

type fakeDatapath struct {
	stats datapath.Stats
	err   error
}

func (f fakeDatapath) Stats() (datapath.Stats, error) { return f.stats, f.err }

// everyDropReason: traffic on n3 and n6, and reason r dropped r times
// (no_pdr 9, adjust 24), and a reason the datapath does not name (99).
func everyDropReason() datapath.Stats {
	s := datapath.Stats{
		Drops: map[datapath.DropReason]uint64{99: 5},
		Interfaces: map[datapath.Role]datapath.InterfaceStats{
			datapath.N3: {Rx: datapath.Traffic{Packets: 11, Bytes: 1100}},
			datapath.N6: {Tx: datapath.Traffic{Packets: 10, Bytes: 900}},
			datapath.N9: {},
		},
	}
	s.Verdicts[datapath.Redirected] = 10
	for r := datapath.DropReason(1); r <= datapath.DropAdjust; r++ {
		s.Drops[r] = uint64(r)
		s.Verdicts[datapath.Dropped] += uint64(r)
	}
	return s
}

// fakeN4 is a PFCP server that has sent and received nothing; busy, its
// serve loop never gets to the scrape's question.
type fakeN4 struct {
	stats  pfcp.Stats
	gauges pfcp.Gauges
	busy   bool
}

func newFakeN4() *fakeN4 {
	return &fakeN4{gauges: pfcp.Gauges{Sessions: 1_000_000, AssociationsUp: 2, AssociationsLost: 1,
		BufferedPackets: 17, BufferOverflowed: 3, BufferDiscarded: 4,
		Journal: &pfcp.JournalStats{Records: 90, Bytes: 81920, Rewrites: 2, Errors: 1, Size: 65536}}}
}

func (f *fakeN4) Stats() *pfcp.Stats { return &f.stats }

func (f *fakeN4) Gauges(ctx context.Context) (pfcp.Gauges, error) {
	if f.busy {
		<-ctx.Done()
		return pfcp.Gauges{}, ctx.Err()
	}
	return f.gauges, nil
}

// lint is promlint's verdict on the UPF's metrics in an exposition.
func lint(body []byte) ([]promlint.Problem, error) {
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(problems, func(p promlint.Problem) bool {
		return !strings.HasPrefix(p.Metric, "upf_")
	}), nil
}

const docPath = "../../docs/metrics.md"

func readDoc(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docRowStart is how a metric's row in docs/metrics.md begins.
var docRowStart = regexp.MustCompile("(?m)^\\| `(upf_[a-z0-9_]+)` \\|.*$")

// documented are the metrics docs/metrics.md has a row for, sorted.
func documented() []string {
	b, err := os.ReadFile(docPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range docRowStart.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// docRow is the row of a metric in the doc, "" if none.
func docRow(doc, name string) string {
	for _, m := range docRowStart.FindAllStringSubmatch(doc, -1) {
		if m[1] == name {
			return m[0]
		}
	}
	return ""
}
