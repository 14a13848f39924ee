package runner

import (
	"context"
	"fmt"
	"math"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
)

// ndrKind searches each direction asked for its highest rate within the
// loss tolerance, through each target the same way: their searches take
// turns, a trial each, so that both meet the same moments of a busy
// machine.
type ndrKind struct{}

func (ndrKind) measure(ctx context.Context, r *runner, st scenario.Step, targets []target) error {
	n := st.Settings.(*scenario.NDR)
	var out []report.Search
	for _, dir := range n.Direction.Each() {
		searches, err := r.ndr(ctx, n, dir, targets)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		if len(searches) > 1 {
			searches[0].Reference = &searches[1]
		}
		out = append(out, searches[0])
	}
	r.run.AddNDR(st.Header(), out...)
	return nil
}

// ndr runs one direction's search through each target, a trial of each
// in turn, until all are over.
func (r *runner) ndr(ctx context.Context, n *scenario.NDR, dir scenario.Direction, targets []target) ([]report.Search, error) {
	var flights []*flight
	defer func() { closeAll(flights) }()
	var searches []*search
	for _, tg := range targets {
		l := newLoad(dir, n.Size, n.MaxRate, n.Trial, tg.sessions, r.s.Sessions.Flows, tg.path)
		l.cores = n.Cores
		f, err := tg.m.prepare(l)
		if err != nil {
			return nil, err
		}
		flights = append(flights, f)
		searches = append(searches, newSearch(n, l))
	}
	for i := 0; ; i++ {
		busy := false
		for _, k := range turns(i, len(targets)) {
			pps, ok := searches[k].next()
			if !ok {
				continue
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			busy = true
			t, err := r.trial(ctx, targets[k], flights[k], n, pps)
			if err != nil {
				return nil, err
			}
			searches[k].record(pps, t)
		}
		if !busy {
			break
		}
	}
	out := make([]report.Search, len(searches))
	for k, s := range searches {
		out[k] = report.NewSearch(string(dir), n.Size.String(), n.LossTolerance, s.trials)
	}
	return out, nil
}

// trial sends one trial of an NDR search at pps (+Inf: flat out) through
// tg, counted from nothing. A trial that measured nothing (round.measured)
// is sent again, twice at most: it would pass having sent nothing.
func (r *runner) trial(ctx context.Context, tg target, f *flight, n *scenario.NDR, pps float64) (report.Trial, error) {
	f.l.pps = flatOut(pps)
	for try := 1; ; try++ {
		if err := f.reset(); err != nil {
			return report.Trial{}, err
		}
		if err := tg.m.round(ctx, []*flight{f}, n.Trial); err != nil {
			return report.Trial{}, err
		}
		if f.rounds[0].measured() || try == 3 {
			break
		}
	}
	meas, err := f.result()
	t := report.Trial{Measurement: meas, Passed: err == nil && meas.LossPct <= n.LossTolerance}
	r.progress("  %s %s B at %s through %s: Rx %.1f kpps, loss %.3f%%%s (%s)", f.l.dir, n.Size, rateText(f.l.pps),
		tg.name, meas.RxKpps, meas.LossPct, refusedText(meas), passText(t.Passed))
	return t, err
}

// search is one NDR search, a trial at a time (RFC 2544 §26.1): the first
// at the top rate, then halfway between the highest rate that passed and
// the lowest that failed, until they are the resolution apart or the
// trials are used up. Then the highest that passed is tried confirm times
// more, and is the result if it passes each time (RFC 2544 asks that the
// rate hold). If it fails once, it failed: the search goes on between the
// highest rate that passed below it and it. Rates are in packets per
// second; +Inf is flat out.
type search struct {
	max        int     // search trials, besides the confirmations
	confirm    int     // confirmations a rate needs
	resolution float64 // the search ends when lo and hi are this close
	top        float64 // the first rate

	lo, hi  float64 // the highest rate that passed (0: none), the lowest that failed
	loTrial int     // the trial that passed at lo
	steps   int     // search trials so far
	held    int     // confirmations of lo so far; -1 when not confirming
	over    bool

	trials []report.Trial
	rates  []float64 // each trial's rate
}

func newSearch(n *scenario.NDR, l load) *search {
	top := math.Inf(1)
	if l.pps > 0 {
		top = l.pps
	}
	return &search{max: n.MaxIterations, confirm: n.Confirm, resolution: l.offered(n.Resolution), top: top, hi: top, held: -1}
}

// next is the rate of the next trial; false once the search is over.
func (s *search) next() (float64, bool) {
	switch {
	case s.over:
		return 0, false
	case s.steps == 0:
		return s.top, true
	case s.held >= 0:
		return s.lo, true
	case s.steps < s.max && s.hi-s.lo > s.resolution:
		return (s.lo + s.hi) / 2, true
	case s.lo == 0:
		s.over = true // nothing passed
		return 0, false
	case s.confirm == 0:
		s.finish()
		return 0, false
	}
	s.held = 0
	return s.lo, true
}

// record notes the trial of the rate next gave.
func (s *search) record(rate float64, t report.Trial) {
	s.trials, s.rates = append(s.trials, t), append(s.rates, rate)
	if math.IsInf(rate, 1) && !t.Passed {
		rate = t.TxKpps * 1e3 // flat out failed: what the generator reached is the top
	}
	if s.held >= 0 {
		s.confirmed(rate, t.Passed)
		return
	}
	s.steps++
	if t.Passed {
		s.lo, s.loTrial = rate, len(s.trials)-1
	} else {
		s.hi = min(s.hi, rate)
	}
}

// confirmed notes a confirmation of lo: the last needed ends the search,
// one that fails makes lo a failed rate and the next lower pass the best.
func (s *search) confirmed(rate float64, passed bool) {
	if passed {
		if s.held++; s.held == s.confirm {
			s.finish()
		}
		return
	}
	s.held, s.hi, s.lo = -1, min(s.hi, rate), 0
	for i, t := range s.trials {
		if t.Passed && s.rates[i] < s.hi && s.rates[i] > s.lo {
			s.lo, s.loTrial = s.rates[i], i
		}
	}
}

// finish ends the search at lo: its first passing trial and those that
// confirmed it are the rate found.
func (s *search) finish() {
	s.over = true
	s.trials[s.loTrial].Final = true
	for i := s.loTrial + 1; i < len(s.trials); i++ {
		s.trials[i].Final = s.rates[i] == s.lo
	}
}

// flatOut is the load's pps for a search's rate: 0 for flat out.
func flatOut(rate float64) float64 {
	if math.IsInf(rate, 1) {
		return 0
	}
	return rate
}

func rateText(pps float64) string {
	if pps == 0 {
		return "max"
	}
	return fmt.Sprintf("%.1f kpps", pps/1e3)
}

func passText(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}
