package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/tgen"
)

// The checks of upflab verify (policing.go, usage.go, ...) are step kinds
// that add verdicts to the run: a figure against the limit their settings
// state. What they share is here.

// checkSession establishes a session of the check's own with rules r. A
// UPF that refuses them gives its cause, for the check's refused verdicts;
// err is for anything else.
func (r *runner) checkSession(ctx context.Context, rules smf.Rules) (s smf.Session, cause string, err error) {
	got, phase, err := r.smf.EstablishWith(ctx, 1, rules)
	var refused *smf.CauseError
	switch {
	case errors.As(err, &refused):
		return s, fmt.Sprintf("cause %d (%s)", refused.Cause, smf.CauseName(refused.Cause)), nil
	case err != nil:
		return s, "", err
	case len(got) != 1:
		return s, "", fmt.Errorf("establish a session of the check's: %s", phase)
	}
	return got[0], "", nil
}

// dropSessions deletes a check's sessions, and says so if it could not.
func (r *runner) dropSessions(ctx context.Context, sessions ...smf.Session) error {
	if len(sessions) == 0 {
		return nil
	}
	if _, _, err := r.smf.DeleteSessions(ctx, sessions); err != nil {
		return fmt.Errorf("delete the check's sessions: %w", err)
	}
	return nil
}

// tgenSession is what the generator and the sink know of a session.
func tgenSession(s smf.Session) tgen.Session {
	return tgen.Session{UE: s.UE, UplinkTEID: s.UplinkTEID, DownlinkTEID: s.DownlinkTEID, QFI: s.QFI}
}

// sendBurst sends count frames of f at pps from cpu, and waits until the
// sink has counted them, or settle has passed.
func sendBurst(ctx context.Context, f *flight, cpu int, count uint64, pps float64) error {
	before, err := f.sink.Stats(nil)
	if err != nil {
		return err
	}
	if _, err := f.gen.Run(ctx, tgen.RunOptions{Namespace: f.ns, Device: f.dev, CPUs: []int{cpu}, Count: count,
		Rate: uint64(pps)}); err != nil {
		return err
	}
	return awaitSink(f, before.Packets+count, drain)
}

// awaitSink waits until f's sink has counted want frames, or for up to
// settle: what is on its way arrives within it, what does not is lost.
func awaitSink(f *flight, want uint64, settle time.Duration) error {
	deadline := time.Now().Add(settle)
	for {
		st, err := f.sink.Stats(nil)
		if err != nil || st.Packets >= want || time.Now().After(deadline) {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// innerBytes is the inner IP packet of a payload size: what a QER
// polices and a URR counts.
func innerBytes(payload int) int { return payload + innerHeaders }

// judgedKind is a step kind whose results also make verdicts: restart
// and crash steps are checks too.
type judgedKind struct {
	stepKind
	verdicts func(report.Step) []report.Check
}

func (j judgedKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	err := j.stepKind.run(ctx, r, st)
	for _, s := range r.run.Steps {
		if s.Name == st.Name {
			r.run.AddChecks(st.Header(), j.verdicts(s)...)
		}
	}
	return err
}
