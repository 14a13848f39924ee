package runner

import (
	"context"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

// churnKind deletes and establishes sessions at a rate, beside the others.
type churnKind struct{}

func (churnKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	c := st.Settings.(*scenario.Churn)
	res, err := r.smf.Churn(ctx, smf.Churn{PerSecond: c.PerSecond, Duration: c.Duration, SwitchTo: topo.GNB2N3})
	if err != nil {
		return err
	}
	ch := report.Churn{TargetPerSecond: float64(c.PerSecond), Seconds: c.Duration.Seconds(),
		Established: res.Establish.Accepted, Deleted: res.Delete.Accepted,
		SetupP50Ms: ms(res.Establish.P50), SetupP99Ms: ms(res.Establish.P99)}
	for _, p := range res.Phases() {
		ch.Failed += p.Failed
	}
	ch.AchievedPerSecond = res.Establish.Rate()
	r.progress("  %d established, %d deleted, %.0f/s, %d failed", ch.Established, ch.Deleted, ch.AchievedPerSecond, ch.Failed)
	r.run.AddChurn(st.Header(), ch)
	return nil
}
