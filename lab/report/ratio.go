package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Spread is how far the ratios of a step's rounds (or an NDR's trials at
// the rate found) lie apart: their first and third quartiles, between
// which the middle half of them lies.
type Spread struct {
	Low  float64 `json:"p25"`
	High float64 `json:"p75"`
}

// PacketRatio is m's Rx packet rate over ref's, or nil without a
// reference that received anything. At a set rate it is the share of the
// packets sent that arrived, over ref's: on a busy machine the generator
// may fall short of the rate, and not by as much on each path, which the
// UPF's ratio must not show. Measured in rounds on both sides, it is the
// median of the rounds' ratios, each round's over the reference's round
// beside it, with their quartiles as the spread.
func PacketRatio(m Measurement, ref *Measurement) (*float64, *Spread) {
	if ref == nil {
		return nil, nil
	}
	figure := func(rx, lossPct float64) float64 { return rx }
	if m.OfferedKpps > 0 {
		figure = func(_, lossPct float64) float64 { return 100 - lossPct }
	}
	if len(m.Rounds) > 1 && len(m.Rounds) == len(ref.Rounds) {
		var a, b []float64
		var stats []bool
		for i, r := range m.Rounds {
			f := ref.Rounds[i]
			a, b = append(a, figure(r.RxKpps, r.LossPct)), append(b, figure(f.RxKpps, f.LossPct))
			stats = append(stats, r.BPFStats || f.BPFStats)
		}
		return medianRatio(clearPairs(a, b, stats))
	}
	return medianRatio([]float64{figure(m.RxKpps, m.LossPct)}, []float64{figure(ref.RxKpps, ref.LossPct)})
}

// clearPairs leaves out the pairs measured while BPF's run-time
// statistics were on, if they are fewer than half: else it keeps them all,
// and Measurement.BPFStats says so. A ratio of the one round of 60 that
// ran without them read 0.58, with no spread, where other runs' read
// 0.69-0.70 (0.60-0.73).
func clearPairs(a, b []float64, stats []bool) ([]float64, []float64) {
	var ca, cb []float64
	for i := range min(len(a), len(b), len(stats)) {
		if !stats[i] {
			ca, cb = append(ca, a[i]), append(cb, b[i])
		}
	}
	if 2*len(ca) < min(len(a), len(b)) {
		return a, b
	}
	return ca, cb
}

// medianRatio is the median of a[i]/b[i] over the pairs whose b is not 0,
// and the quartiles of those ratios when there are two or more.
func medianRatio(a, b []float64) (*float64, *Spread) {
	var ratios []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			ratios = append(ratios, a[i]/b[i])
		}
	}
	if len(ratios) == 0 {
		return nil, nil
	}
	slices.Sort(ratios)
	m := quantile(ratios, 0.5)
	if len(ratios) == 1 {
		return &m, nil
	}
	return &m, &Spread{Low: quantile(ratios, 0.25), High: quantile(ratios, 0.75)}
}

// quantile is the q-quantile of sorted values, between the two nearest by
// linear interpolation (R's type 7, as spreadsheets compute quartiles).
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// PerCoreSecond gives m's rates per second of core: the CPU time the core
// of a closed loop (one generator worker flat out, the UPF and the sink in
// its softirq) gave the measurement, which leaves out the time other
// processes took it. Seconds stays the time it took.
func (m *Measurement) PerCoreSecond(core time.Duration) {
	if core <= 0 || m.Seconds <= 0 {
		return
	}
	m.CoreSeconds = core.Seconds()
	f := m.Seconds / m.CoreSeconds
	m.TxGbps, m.TxKpps, m.RxGbps, m.RxKpps = f*m.TxGbps, f*m.TxKpps, f*m.RxGbps, f*m.RxKpps
}

// RatioText writes a ratio with its spread, if it has one: "0.68
// (0.65-0.71)".
func RatioText(ratio *float64, spread *Spread) string {
	if ratio == nil {
		return ""
	}
	if spread == nil {
		return f2(*ratio)
	}
	return fmt.Sprintf("%s (%s-%s)", f2(*ratio), f2(spread.Low), f2(spread.High))
}

// bpfStatsSteps are the numbers of the steps of run measured, in part,
// while BPF's run-time statistics were on: "1, 3", or "".
func bpfStatsSteps(run *Run) string {
	var steps []string
	for i, s := range run.Steps {
		if s.bpfStats() {
			steps = append(steps, strconv.Itoa(i+1))
		}
	}
	return strings.Join(steps, ", ")
}

// bpfStatsNote says which steps were measured, in part, while BPF's
// run-time statistics were on, or is empty.
func bpfStatsNote(run *Run) string {
	steps := bpfStatsSteps(run)
	if steps == "" {
		return ""
	}
	return "BPF's run-time statistics were on during step " + steps +
		": another process turned them on for the whole machine, and every XDP program run paid two clock reads more, " +
		"which draws ratios toward 1. The rounds and trials measured so are left out of a step's ratios where they are fewer than half; " +
		"where they are not, its ratios are drawn toward 1."
}

// bpfStats says whether some measurement of s ran while BPF's run-time
// statistics were on.
func (s Step) bpfStats() bool {
	var ms []Measurement
	for _, m := range s.Throughput {
		ms = append(ms, m)
		if m.Reference != nil {
			ms = append(ms, *m.Reference)
		}
	}
	for _, x := range s.NDR {
		for _, search := range []*Search{&x, x.Reference} {
			if search == nil {
				continue
			}
			for _, t := range search.Trials {
				ms = append(ms, t.Measurement)
			}
		}
	}
	for _, l := range s.Subscribers {
		ms = append(ms, l.Uplink, l.Downlink)
	}
	return slices.ContainsFunc(ms, func(m Measurement) bool { return m.BPFStats })
}
