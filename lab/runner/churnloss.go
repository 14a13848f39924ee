package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

// churnUnderTrafficKind churns sessions of its own (smf.Churn: new ones
// established, its population's downlinks switched, its new ones deleted,
// at a steady rate) while the run's sessions, which it never touches,
// carry steady traffic: they must lose nothing, and the UPF must accept
// every request.
type churnUnderTrafficKind struct{}

func (churnUnderTrafficKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	x := st.Settings.(*scenario.ChurnUnderTraffic)
	population, phase, err := r.smf.EstablishWith(ctx, x.Population, smf.Rules{})
	var refused *smf.CauseError
	if errors.As(err, &refused) && len(population) == 0 {
		cause := fmt.Sprintf("cause %d (%s)", refused.Cause, smf.CauseName(refused.Cause))
		r.run.AddChecks(st.Header(), report.RefusedCheck("churn requests refused or not answered", cause))
		return nil
	}
	if err != nil {
		return errors.Join(fmt.Errorf("the churn's population: %s: %w", phase, err), r.dropSessions(ctx, population...))
	}
	var res smf.ChurnResult
	var churnErr error
	lost, err := r.besideTraffic(ctx, x.Rate.PPS, x.Duration+time.Minute, func() {
		res, churnErr = r.smf.Churn(ctx, smf.Churn{PerSecond: x.PerSecond, Duration: x.Duration, SwitchTo: topo.GNB2N3, Base: population})
	})
	err = errors.Join(err, r.dropSessions(ctx, population...))
	// A request the UPF refused or left unanswered is the check's figure.
	if errors.As(churnErr, &refused) || errors.Is(churnErr, smf.ErrTimeout) {
		churnErr = nil
	}
	if err = errors.Join(err, churnErr); err != nil {
		return err
	}
	failed, sent := 0, 0
	for _, p := range res.Phases() {
		failed += p.Failed
		sent += p.Sent
	}
	note := fmt.Sprintf("%d requests: %s; %s; %s; %.0f establishments a second of %d asked, %d of %d intervals late",
		sent, res.Establish, res.Switch, res.Delete, res.Establish.Rate(), x.PerSecond, res.Late, res.Intervals)
	checks := []report.Check{report.AtMost("churn requests refused or not answered", float64(failed), 0, "").With(note)}
	checks = append(checks, lossChecks(fmt.Sprintf("the %d sessions left alone", len(r.sessions)), lost)...)
	r.run.AddChecks(st.Header(), checks...)
	return nil
}
