package runner

import (
	"context"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
)

// cbrKind sends uplink at a constant rate (or flood) for each size, like
// ocbr, and reports the goodput that arrived.
type cbrKind struct{}

func (cbrKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	t := Traffic{Direction: scenario.Uplink, Sessions: r.sessions, Flows: r.s.Sessions.Flows}
	m := newMeasurer(r.lab, r.upf.pid())
	points, err := cbrSweep(ctx, m, t, tgen.UPF, *st.Settings.(*scenario.CBR), func(pt report.CBR) {
		r.progress("  %d B: %.0f pps, %.1f Mbit/s, loss %.3f%%", pt.Size, pt.PPS, pt.Mbps, pt.LossPct)
	})
	if err != nil {
		return err
	}
	r.run.AddCBR(st.Header(), points...)
	return nil
}

// cbrSweep sends t at c's rate for c's time at each of c's sizes, and
// gives the goodput that arrived, size by size (also to each). It is
// upflab cbr's too (CBR).
func cbrSweep(ctx context.Context, m *measurer, t Traffic, path tgen.Path, c scenario.CBR, each func(report.CBR)) ([]report.CBR, error) {
	cpus := m.cpus
	var points []report.CBR
	for _, size := range c.Sizes {
		if ctx.Err() != nil {
			break
		}
		l := newLoad(t.Direction, scenario.Size{Bytes: size}, c.Rate, c.Duration, t.Sessions, t.Flows, path)
		m.cpus = Workers(cpus, l.pps, len(t.Sessions)*max(t.Flows, 1))
		meas, err := m.run(ctx, l)
		if err != nil {
			return points, err
		}
		pt := report.NewCBR(size, l.pps/1e3, time.Duration(meas.Seconds*float64(time.Second)), meas.TxPackets, meas.RxPackets)
		each(pt)
		points = append(points, pt)
	}
	return points, nil
}
