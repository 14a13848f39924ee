package runner

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

// handoverKind hands sessions of its own over from the gNB's first
// address to its second, one at a time, with SNDEM (TS 29.244 §5.2.2.3:
// an End Marker on the old tunnel once it carries nothing more), while
// the DN host sends each numbered datagrams (dlProbe) and the run's
// sessions carry steady traffic. The gNB's socket sees both paths in the
// order the kernel took the frames.
type handoverKind struct{}

// handoverTraffic bounds the traffic beside the check.
const handoverTraffic = 10 * time.Minute

func (handoverKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	x := st.Settings.(*scenario.Handover)
	var tally handoverTally
	lost, refused, err := r.probeEach(ctx, x.Rate.PPS, handoverTraffic, x.Handovers, func(probe *dlProbe) (string, error) {
		return handOver(ctx, r, probe, x, &tally)
	})
	if err != nil {
		return err
	}
	checks := tally.checks(refused)
	checks = append(checks, lossChecks(fmt.Sprintf("the %d sessions carrying traffic", len(r.sessions)), lost)...)
	r.run.AddChecks(st.Header(), checks...)
	return nil
}

// handOver establishes a session, sends to its UE on the old path, switches
// it, sends on, and tallies what the gNB got. A UPF that refuses the
// session or the switch gives its cause.
func handOver(ctx context.Context, r *runner, probe *dlProbe, x *scenario.Handover, t *handoverTally) (string, error) {
	s, cause, err := r.checkSession(ctx, smf.Rules{})
	if cause != "" || err != nil {
		return cause, err
	}
	limit := x.Before + x.After + 10*time.Second
	burst := probe.start(s.UE, x.Interval, limit, uint64(limit/x.Interval))
	sleep(ctx, x.Before)
	_, err = r.smf.SwitchPathOf(ctx, []smf.Session{s}, topo.GNB2N3)
	var refused *smf.CauseError
	if errors.As(err, &refused) {
		cause, err = fmt.Sprintf("path switch: cause %d (%s)", refused.Cause, smf.CauseName(refused.Cause)), nil
	}
	if err == nil && cause == "" {
		sleep(ctx, x.After)
	}
	sent, sendErr := burst.stop()
	if err = errors.Join(err, sendErr); err != nil || cause != "" {
		return cause, errors.Join(err, r.dropSessions(ctx, s))
	}
	sleep(ctx, drain)
	t.add(sent, s.GNB, probe.arrivals(s.DownlinkTEID, burst.burst))
	return "", r.dropSessions(ctx, s)
}

// handoverTally sums what the handovers' datagrams did.
type handoverTally struct {
	handovers, sent, lost, duplicated, reordered uint64
	oldPath, newPath                             uint64 // datagrams that came each way
	endMarkers, withoutEndMarker, afterEndMarker uint64
}

// add counts one handover: sent datagrams, and what reached the gNB in
// the session's tunnel, in order, old being the path before.
func (t *handoverTally) add(sent uint64, old netip.Addr, got []arrival) {
	t.handovers++
	t.sent += sent
	seen := map[uint64]bool{}
	var next uint64 // one past the highest sequence seen
	ended, markers := false, 0
	for _, a := range got {
		switch {
		case a.endMarker:
			if a.to == old {
				markers++
				ended = true
			}
			continue
		case seen[a.seq]:
			t.duplicated++
			continue
		case a.seq < next:
			t.reordered++
		default:
			next = a.seq + 1
		}
		seen[a.seq] = true
		if a.to == old {
			t.oldPath++
			if ended {
				t.afterEndMarker++
			}
		} else {
			t.newPath++
		}
	}
	t.lost += sent - min(uint64(len(seen)), sent)
	t.endMarkers += uint64(markers)
	if markers == 0 {
		t.withoutEndMarker++
	}
}

// checks are the tally's lines; refused, the UPF's cause, makes them
// refused if no handover was done.
func (t *handoverTally) checks(refused string) []report.Check {
	names := []string{"frames lost across the handover", "frames duplicated", "frames reordered",
		"handovers without an End Marker on the old path", "frames on the old path after its End Marker"}
	if t.handovers == 0 && refused != "" {
		var out []report.Check
		for _, n := range names {
			out = append(out, report.RefusedCheck(n, refused))
		}
		return out
	}
	note := fmt.Sprintf("%d handovers, %d sent: %d came on the old path, %d on the new", t.handovers, t.sent, t.oldPath, t.newPath)
	lost := report.AtMost(names[0], float64(t.lost), 0, "frames").With(note)
	if t.oldPath == 0 || t.newPath == 0 {
		lost = lost.Failed(note + ": a path carried nothing, so nothing was handed over")
	}
	return []report.Check{
		lost,
		report.AtMost(names[1], float64(t.duplicated), 0, "frames"),
		report.AtMost(names[2], float64(t.reordered), 0, "frames").With("in the order the gNB's host took them, both paths"),
		report.AtMost(names[3], float64(t.withoutEndMarker), 0, "").With(fmt.Sprintf("%d End Markers", t.endMarkers)),
		report.AtMost(names[4], float64(t.afterEndMarker), 0, "frames"),
	}
}
