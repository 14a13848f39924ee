package runner

import (
	"context"
	"fmt"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
)

// throughputKind sends one load in each direction asked for, one after
// the other, and measures what arrives.
type throughputKind struct{}

func (throughputKind) measure(ctx context.Context, r *runner, m *measurer, st scenario.Step, sessions []tgen.Session, path tgen.Path) error {
	ms, err := r.throughput(ctx, m, st, sessions, path)
	if err != nil {
		return err
	}
	for i := range ms {
		pairReference(r.refs, refKey(st, ms[i].Direction), path, &ms[i], &ms[i].Reference)
	}
	if r.ownResults(path) {
		r.run.AddThroughput(st.Header(), ms...)
	}
	return nil
}

func (r *runner) throughput(ctx context.Context, m *measurer, st scenario.Step, sessions []tgen.Session, path tgen.Path) ([]report.Measurement, error) {
	t := st.Settings.(*scenario.Throughput)
	var out []report.Measurement
	for _, dir := range t.Direction.Each() {
		meas, err := m.run(ctx, newLoad(dir, t.Size, t.Rate, t.Duration, sessions, r.s.Sessions.Flows, path))
		if err != nil {
			return out, fmt.Errorf("%s: %w", dir, err)
		}
		r.progress("  %s %s B: Tx %.1f kpps, Rx %.1f kpps, loss %.3f%%%s", dir, t.Size, meas.TxKpps, meas.RxKpps, meas.LossPct, refusedText(meas))
		out = append(out, meas)
	}
	return out, nil
}
