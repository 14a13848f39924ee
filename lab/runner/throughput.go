package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
)

// throughputKind sends one load in each direction asked for, each on its
// own, through each target in turn: in rounds, the targets and the
// directions take turns round by round, so that the UPF's rounds and the
// reference forwarder's meet the same moments of a busy machine.
type throughputKind struct{}

func (throughputKind) measure(ctx context.Context, r *runner, st scenario.Step, targets []target) error {
	t := st.Settings.(*scenario.Throughput)
	dirs := t.Direction.Each()
	flights := make([][]*flight, len(dirs)) // by direction, then target
	defer func() {
		for _, fs := range flights {
			closeAll(fs)
		}
	}()
	for i, dir := range dirs {
		for _, tg := range targets {
			l := newLoad(dir, t.Size, t.Rate, t.Round(), tg.sessions, r.s.Sessions.Flows, tg.path)
			l.cores = t.Cores
			f, err := tg.m.prepare(l)
			if err != nil {
				return fmt.Errorf("%s: %w", dir, err)
			}
			flights[i] = append(flights[i], f)
		}
	}
	for round := range t.Rounds {
		for i, dir := range dirs {
			for _, k := range turns(round, len(targets)) {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err := roundSent(ctx, targets[k].m, flights[i][k], t.Round()); err != nil {
					return fmt.Errorf("%s through %s: %w", dir, targets[k].name, err)
				}
			}
		}
	}
	var ms []report.Measurement
	for i := range dirs {
		m, err := pairedResult(flights[i])
		if err != nil {
			return err
		}
		r.progress("  %s", measurementText(m))
		ms = append(ms, m)
	}
	r.run.AddThroughput(st.Header(), ms...)
	return nil
}

// roundSent runs a round of f, and runs it again, twice at most, if it
// measured nothing (round.measured).
func roundSent(ctx context.Context, m *measurer, f *flight, d time.Duration) error {
	for try := 1; ; try++ {
		if err := m.round(ctx, []*flight{f}, d); err != nil {
			return err
		}
		if f.rounds[len(f.rounds)-1].measured() || try == 3 {
			return nil
		}
		f.rounds = f.rounds[:len(f.rounds)-1]
	}
}

// pairedResult is the first flight's result, with the second's, if there
// is one, as its reference.
func pairedResult(flights []*flight) (report.Measurement, error) {
	m, err := flights[0].result()
	if err != nil || len(flights) < 2 {
		return m, err
	}
	ref, err := flights[1].result()
	m.Reference = &ref
	return m, err
}

// measurementText sums a measurement up for the progress lines.
func measurementText(m report.Measurement) string {
	text := fmt.Sprintf("%s %s B: Tx %.1f kpps, Rx %.1f kpps, loss %.3f%%%s", m.Direction, m.Size, m.TxKpps, m.RxKpps, m.LossPct, refusedText(m))
	if ref := m.Reference; ref != nil {
		text += fmt.Sprintf("; reference forwarder Rx %.1f kpps, loss %.3f%%%s", ref.RxKpps, ref.LossPct, refusedText(*ref))
		if ratio, spread := report.PacketRatio(m, ref); ratio != nil {
			text += ", x ref " + report.RatioText(ratio, spread)
		}
		if m.BPFStats || ref.BPFStats {
			text += " (BPF's run-time statistics were on, turned on by another process: the rounds measured so are left out of the ratio)"
		}
	}
	return text
}
