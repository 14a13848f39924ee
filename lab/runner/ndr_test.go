package runner

import (
	"math"
	"slices"
	"testing"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
)

// TestSearch pins down the rates an NDR search tries, and which trials
// make its result, against a path that passes every rate up to its
// capacity (and flat out if the generator reaches no more), but for the
// trials a busy machine spoils.
func TestSearch(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		name     string
		maxRate  float64 // pps; 0: flat out
		confirm  int
		capacity float64 // pps
		reach    float64 // what the generator reaches flat out, pps
		spoilt   []int   // trials that fail whatever their rate
		rates    []float64
		final    []int
	}{
		{name: "flat out holds: the closed loop", confirm: 3, capacity: 2e6, reach: 1.5e6,
			rates: []float64{inf, inf, inf, inf}, final: []int{0, 1, 2, 3}},
		{name: "halving, then the best pass confirmed", confirm: 2, capacity: 600e3, reach: 1e6,
			rates: []float64{inf, 500e3, 750e3, 625e3, 562.5e3, 593.75e3, 609.375e3, 601.5625e3, 593.75e3, 593.75e3},
			final: []int{5, 8, 9}},
		{name: "a confirmation fails: the next lower pass is confirmed", confirm: 2, capacity: 600e3, reach: 1e6, spoilt: []int{9},
			rates: []float64{inf, 500e3, 750e3, 625e3, 562.5e3, 593.75e3, 609.375e3, 601.5625e3, 593.75e3, 593.75e3, 562.5e3, 562.5e3},
			final: []int{4, 10, 11}},
		{name: "a first trial at a set rate that passes", maxRate: 400e3, confirm: 1, capacity: 600e3,
			rates: []float64{400e3, 400e3}, final: []int{0, 1}},
		{name: "no confirmation asked", maxRate: 800e3, capacity: 600e3,
			rates: []float64{800e3, 400e3, 600e3, 700e3, 650e3, 625e3, 612.5e3, 606.25e3}, final: []int{2}},
		{name: "nothing passes", confirm: 3, capacity: 0, reach: 1e6,
			rates: []float64{inf, 500e3, 250e3, 125e3, 62.5e3, 31.25e3, 15.625e3, 7.8125e3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := &scenario.NDR{MaxIterations: 8, Resolution: scenario.Rate{PPS: 5000}, Confirm: c.confirm}
			l := load{dir: scenario.Uplink, mix: []scenario.Weighted{{Bytes: 64, Weight: 1}}, pps: c.maxRate}
			s := newSearch(n, l)
			var rates []float64
			for len(rates) < 40 {
				rate, ok := s.next()
				if !ok {
					break
				}
				tx := flatOut(rate)
				if tx == 0 {
					tx = c.reach
				}
				passed := tx <= c.capacity && !slices.Contains(c.spoilt, len(rates))
				rates = append(rates, rate)
				s.record(rate, report.Trial{Measurement: report.Measurement{TxKpps: tx / 1e3, RxKpps: tx / 1e3}, Passed: passed})
			}
			if !slices.Equal(rates, c.rates) {
				t.Errorf("tried %v\nwant  %v", rates, c.rates)
			}
			var final []int
			for i, tr := range s.trials {
				if tr.Final {
					final = append(final, i)
				}
			}
			if !slices.Equal(final, c.final) {
				t.Errorf("the rate found has trials %v; want %v", final, c.final)
			}
		})
	}
}

// The UPF and the reference forwarder take turns, neither always first.
func TestTurns(t *testing.T) {
	for _, c := range []struct {
		round, n int
		want     []int
	}{{0, 2, []int{1, 0}}, {1, 2, []int{0, 1}}, {2, 2, []int{1, 0}}, {0, 1, []int{0}}, {1, 1, []int{0}}} {
		if got := turns(c.round, c.n); !slices.Equal(got, c.want) {
			t.Errorf("turns(%d, %d) = %v; want %v", c.round, c.n, got, c.want)
		}
	}
}

// A round or trial measured something when it sent anything at a set
// rate, and 64 batches at least flat out on one core, where one batch
// gave 10 kpps of a 2-4 Mpps path.
func TestRoundMeasured(t *testing.T) {
	for _, c := range []struct {
		r    round
		want bool
	}{
		{round{tx: 0}, false},
		{round{tx: 1}, true},
		{round{closedLoop: true, tx: 0}, false},
		{round{closedLoop: true, tx: 64}, false},
		{round{closedLoop: true, tx: closedLoopFloor}, true},
	} {
		if got := c.r.measured(); got != c.want {
			t.Errorf("%+v measured: %v; want %v", c.r, got, c.want)
		}
	}
}
