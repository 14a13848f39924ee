package runner

import (
	"context"
	"fmt"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
)

// ndrKind searches each direction asked for its highest rate within the
// loss tolerance.
type ndrKind struct{}

func (ndrKind) measure(ctx context.Context, r *runner, m *measurer, st scenario.Step, sessions []tgen.Session, path tgen.Path) error {
	searches, err := r.ndr(ctx, m, st, sessions, path)
	if err != nil {
		return err
	}
	for i := range searches {
		pairReference(r.refSearch, refKey(st, searches[i].Direction), path, &searches[i], &searches[i].Reference)
	}
	if r.ownResults(path) {
		r.run.AddNDR(st.Header(), searches...)
	}
	return nil
}

// ndr searches each direction for the highest rate whose loss is within
// the tolerance (RFC 2544 §26.1): a first trial at the top rate, then a
// binary search between the best passing and the least failing rate.
func (r *runner) ndr(ctx context.Context, m *measurer, st scenario.Step, sessions []tgen.Session, path tgen.Path) ([]report.Search, error) {
	n := st.Settings.(*scenario.NDR)
	var out []report.Search
	for _, dir := range n.Direction.Each() {
		l := newLoad(dir, n.Size, n.MaxRate, n.Trial, sessions, r.s.Sessions.Flows, path)
		trial := func(pps float64) (report.Trial, error) {
			l.pps = pps
			meas, err := m.run(ctx, l)
			t := report.Trial{Measurement: meas, Passed: meas.LossPct <= n.LossTolerance}
			r.progress("  %s %s B at %s: Rx %.1f kpps, loss %.3f%%%s (%s)", dir, n.Size, rateText(pps), meas.RxKpps, meas.LossPct, refusedText(meas), passText(t.Passed))
			return t, err
		}
		var trials []report.Trial
		first, err := trial(l.pps)
		if err != nil {
			return out, err
		}
		trials = append(trials, first)
		if !first.Passed {
			lo, hi := 0.0, first.TxKpps*1e3 // what the generator reached is the top
			resolution := l.offered(n.Resolution)
			for range n.MaxIterations - 1 {
				if hi-lo <= resolution || ctx.Err() != nil {
					break
				}
				t, err := trial((lo + hi) / 2)
				if err != nil {
					return out, err
				}
				trials = append(trials, t)
				if t.Passed {
					lo = t.OfferedKpps * 1e3
				} else {
					hi = t.OfferedKpps * 1e3
				}
			}
		}
		out = append(out, report.NewSearch(string(dir), n.Size.String(), n.LossTolerance, trials))
	}
	return out, nil
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
