package runner

import (
	"context"

	"github.com/sluice-upf/sluice/lab/probe"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/topo"
)

// pingKind measures round trips through the first session: the lab's
// probe, or the system's ping from a real UE.
type pingKind struct{}

func (pingKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	p := st.Settings.(*scenario.Ping)
	if p.Mode == scenario.PingUE {
		return r.pingFromUE(ctx, st, p)
	}
	// The probe's G-PDUs use session 0's TEIDs: the gNB of the steps with
	// real UEs, which would take its answers, is closed after each.
	x := r.sessions[0]
	o := probe.PingOptions{Namespace: r.lab.GNB, UE: x.UE, TEIDUplink: x.UplinkTEID, TEIDDownlink: x.DownlinkTEID,
		QFI: x.QFI, Count: p.Count, Interval: p.Interval, Sizes: p.Sizes}
	// The far ends need an XDP program for what upfd sends into them.
	for _, end := range [][2]string{{r.lab.GNB, topo.DevN3}, {r.lab.DN, topo.DevN6}} {
		c, err := r.lab.AttachPass(end[0], end[1])
		if err != nil {
			return err
		}
		defer c.Close()
	}
	res, err := probe.Ping(ctx, o)
	if err != nil {
		return err
	}
	var pings []report.Ping
	for _, s := range res.Sizes {
		pings = append(pings, report.NewPing(topo.DNHost.String(), s.Size, s.Sent, s.RTTs, s.Time))
		r.progress("  %d B: %d sent, %d received, rtt avg %.3f ms", s.Size, s.Sent, s.Received, float64(s.Avg)/1e6)
	}
	r.run.AddPing(st.Header(), pings...)
	return nil
}
