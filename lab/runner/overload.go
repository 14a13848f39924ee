package runner

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

// overloadKind checks a UPF asked for more sessions than it may hold, all
// at once: those beyond its limit are refused with No resources available
// (TS 29.244 §8.2.1), it answers N4 after, and the sessions it had forward
// meanwhile. The ones it took are deleted again.
type overloadKind struct{}

// overloadTraffic bounds the steady traffic beside the flood.
const overloadTraffic = time.Minute

func (overloadKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	o := st.Settings.(*scenario.Overload)
	had := map[uint64]bool{}
	for _, s := range r.smf.Sessions() {
		had[s.CPSEID] = true
	}
	var (
		phases                   []smf.Phase
		floodErr, hbErr, dropErr error
		heartbeat                time.Duration
	)
	lost, err := r.besideTraffic(ctx, o.Rate.PPS, overloadTraffic, func() {
		phases, floodErr = r.smf.Establish(ctx, o.Sessions)
		var fresh []smf.Session
		for _, s := range r.smf.Sessions() {
			if !had[s.CPSEID] {
				fresh = append(fresh, s)
			}
		}
		heartbeat, hbErr = heartbeatAfter(r)
		_, _, dropErr = r.smf.DeleteSessions(ctx, fresh)
	})
	if err != nil {
		return err
	}
	if len(phases) == 0 {
		return errors.Join(floodErr, dropErr)
	}
	checks := floodChecks(phases[0], o.Sessions)
	hb := report.AtMost("N4 answers after the flood", float64(heartbeat.Microseconds())/1e3, 1000, "ms").With("a Heartbeat Request")
	if hbErr != nil {
		hb = hb.Failed(hbErr.Error())
	}
	checks = append(checks, hb)
	checks = append(checks, lossChecks("the sessions there", lost)...)
	r.run.AddChecks(st.Header(), checks...)
	// Refusals are the check's figures; what went wrong otherwise is not.
	var refused *smf.CauseError
	if errors.As(floodErr, &refused) || errors.Is(floodErr, smf.ErrTimeout) {
		floodErr = nil
	}
	return errors.Join(floodErr, dropErr)
}

// floodChecks are the verdicts of the establishments: some refused with
// No resources available (the limit was reached), none answered otherwise.
func floodChecks(p smf.Phase, asked int) []report.Check {
	full := p.Refused[ie.CauseNoResourcesAvailable]
	note := fmt.Sprintf("%d asked for: %s", asked, p)
	reached := report.AtLeast("sessions refused with No resources available", float64(full), 1, "").With(note)
	other := report.AtMost("sessions refused otherwise, or not answered", float64(p.Failed-full), 0, "")
	return []report.Check{reached, other}
}

// heartbeatAfter is how long the UPF takes to answer a Heartbeat Request,
// asked from a port of the lab's own, for a second at most.
func heartbeatAfter(r *runner) (time.Duration, error) {
	probe, err := newN4Probe(r.lab)
	if err != nil {
		return 0, err
	}
	defer probe.close()
	start := time.Now()
	if _, err := probe.ask(netip.AddrPortFrom(topo.UPFN4, smf.PFCPPort), time.Second); err != nil {
		return time.Since(start), fmt.Errorf("no Heartbeat Response within 1s: %w", err)
	}
	return time.Since(start), nil
}
