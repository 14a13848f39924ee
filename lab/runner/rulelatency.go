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

// ruleLatencyKind times how soon a UPF's rules take effect: from the
// Establishment Response to the first downlink frame forwarded, and from
// a path switch's Modification Response to the first frame at the new
// address, one session of its own at a time, beside traffic through the
// run's sessions. The DN host sends to the session's UE without pause
// (dlProbe), so a rule shows as soon as it forwards.
type ruleLatencyKind struct{}

// ruleTraffic bounds the traffic beside the check; the probe's bursts are
// bounded by the check's timeout.
const ruleTraffic = 5 * time.Minute

func (ruleLatencyKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	x := st.Settings.(*scenario.RuleLatency)
	var est, mod ruleSamples
	lost, refused, err := r.probeEach(ctx, x.Rate.PPS, ruleTraffic, x.Sessions, func(probe *dlProbe) (string, error) {
		return timeRules(ctx, r, probe, x, &est, &mod)
	})
	if err != nil {
		return err
	}
	var checks []report.Check
	if refused != "" && est.n() == 0 {
		checks = append(checks, report.RefusedCheck("Establishment Response to first frame", refused))
	} else {
		checks = append(checks, est.checks("Establishment Response to first frame", x)...)
	}
	if refused != "" && mod.n() == 0 {
		checks = append(checks, report.RefusedCheck("Modification Response to first frame on the new path", refused))
	} else {
		checks = append(checks, mod.checks("Modification Response to first frame on the new path", x)...)
	}
	checks = append(checks, lossChecks(fmt.Sprintf("the %d sessions carrying traffic", len(r.sessions)), lost)...)
	r.run.AddChecks(st.Header(), checks...)
	return nil
}

// timeRules establishes one session, times its first frame, switches its
// path, times the first frame there, and deletes it. A UPF that refuses
// the session or the switch gives its cause.
func timeRules(ctx context.Context, r *runner, probe *dlProbe, x *scenario.RuleLatency, est, mod *ruleSamples) (string, error) {
	s, cause, err := r.checkSession(ctx, smf.Rules{})
	if cause != "" || err != nil {
		return cause, err
	}
	established := time.Now()
	burst := probe.start(s.UE, x.Interval, 2*x.Timeout+time.Second, uint64(4*x.Timeout/x.Interval))
	first, err := probe.first(ctx, burst.burst, s.DownlinkTEID, s.GNB, established, x.Timeout)
	est.add(established, first, err)
	asked := time.Now()
	_, err = r.smf.SwitchPathOf(ctx, []smf.Session{s}, topo.GNB2N3)
	var refused *smf.CauseError
	switch {
	case errors.As(err, &refused):
		cause = fmt.Sprintf("path switch: cause %d (%s)", refused.Cause, smf.CauseName(refused.Cause))
	case err != nil:
		burst.stop()
		return "", errors.Join(err, r.dropSessions(ctx, s))
	default:
		switched := time.Now()
		burst.poke()
		// A frame at the new address before the Response counts 0: the
		// rule took effect before the UPF said so.
		first, err = probe.first(ctx, burst.burst, s.DownlinkTEID, topo.GNB2N3, asked, x.Timeout)
		mod.add(switched, first, err)
	}
	_, sendErr := burst.stop()
	return cause, errors.Join(sendErr, r.dropSessions(ctx, s))
}

// ruleSamples are the times from a Response to the first frame, and the
// rules that forwarded nothing in time.
type ruleSamples struct {
	took   []time.Duration
	missed int
}

func (s *ruleSamples) add(answered, first time.Time, err error) {
	if err != nil {
		s.missed++
		return
	}
	s.took = append(s.took, max(first.Sub(answered), 0))
}

func (s *ruleSamples) n() int { return len(s.took) + s.missed }

// checks are the p50 and p99 against their limits; a rule that forwarded
// nothing in time fails both.
func (s *ruleSamples) checks(name string, x *scenario.RuleLatency) []report.Check {
	note := fmt.Sprintf("%d sessions, a datagram every %s", s.n(), x.Interval)
	var out []report.Check
	for _, q := range []struct {
		name  string
		at    int
		limit time.Duration
	}{{"p50", 50, x.P50}, {"p99", 99, x.P99}} {
		c := report.AtMost(name+" "+q.name, percentileMs(s.took, q.at), ms(q.limit), "ms").With(note)
		if s.missed > 0 {
			c = c.Failed(fmt.Sprintf("%d of %d rules forwarded nothing within %s", s.missed, s.n(), x.Timeout))
		}
		out = append(out, c)
	}
	return out
}
