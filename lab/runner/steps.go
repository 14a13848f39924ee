package runner

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sluice-upf/sluice/lab/probe"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

// step runs one step against the UPF under test.
func (r *runner) step(ctx context.Context, st scenario.Step) error {
	m := newMeasurer(r.lab, r.upf.pid())
	h := st.Header()
	switch st.Kind {
	case scenario.KindThroughput:
		ms, err := r.throughput(ctx, m, st, r.sessions, tgen.UPF)
		if err != nil {
			return err
		}
		for i := range ms {
			ms[i].Reference = r.refs[refKey(st, ms[i].Direction)]
		}
		r.run.AddThroughput(h, ms...)
	case scenario.KindNDR:
		searches, err := r.ndr(ctx, m, st, r.sessions, tgen.UPF)
		if err != nil {
			return err
		}
		for i := range searches {
			searches[i].Reference = r.refSearch[refKey(st, searches[i].Direction)]
		}
		r.run.AddNDR(h, searches...)
	case scenario.KindSubscribers:
		loads, err := r.subscribers(ctx, m, st, r.sessions, tgen.UPF)
		if err != nil {
			return err
		}
		for i := range loads {
			l := &loads[i]
			l.Uplink.Reference = r.refs[subscribersKey(st, l.Uplink.Direction, l.Subscribers)]
			l.Downlink.Reference = r.refs[subscribersKey(st, l.Downlink.Direction, l.Subscribers)]
		}
		r.run.AddSubscribers(h, loads...)
	case scenario.KindPing:
		return r.ping(ctx, st)
	case scenario.KindCBR:
		return r.cbr(ctx, m, st)
	case scenario.KindChurn:
		return r.churn(ctx, st)
	case scenario.KindRestart:
		return r.restart(ctx, st)
	default:
		return fmt.Errorf("step kind %q is not run", st.Kind)
	}
	return nil
}

// referenceStep runs a step through the reference forwarder, keeping its
// measurements for the UPF's to be compared with. A scenario whose UPF is
// the reference forwarder reports them as its own.
func (r *runner) referenceStep(ctx context.Context, m *measurer, st scenario.Step, sessions []tgen.Session) error {
	own := r.s.UPF.Kind == scenario.UPFReference
	switch st.Kind {
	case scenario.KindThroughput:
		ms, err := r.throughput(ctx, m, st, sessions, tgen.Wire)
		if err != nil {
			return err
		}
		for i := range ms {
			r.refs[refKey(st, ms[i].Direction)] = &ms[i]
		}
		if own {
			r.run.AddThroughput(st.Header(), ms...)
		}
	case scenario.KindNDR:
		searches, err := r.ndr(ctx, m, st, sessions, tgen.Wire)
		if err != nil {
			return err
		}
		for i := range searches {
			r.refSearch[refKey(st, searches[i].Direction)] = &searches[i]
		}
		if own {
			r.run.AddNDR(st.Header(), searches...)
		}
	case scenario.KindSubscribers:
		loads, err := r.subscribers(ctx, m, st, sessions, tgen.Wire)
		if err != nil {
			return err
		}
		for i := range loads {
			l := &loads[i]
			r.refs[subscribersKey(st, l.Uplink.Direction, l.Subscribers)] = &l.Uplink
			r.refs[subscribersKey(st, l.Downlink.Direction, l.Subscribers)] = &l.Downlink
		}
		if own {
			r.run.AddSubscribers(st.Header(), loads...)
		}
	}
	return nil
}

func refKey(st scenario.Step, direction string) string { return st.Name + "/" + direction }

func subscribersKey(st scenario.Step, direction string, n int) string {
	return fmt.Sprintf("%s/%d", refKey(st, direction), n)
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

// ndr searches each direction for the highest rate whose loss is within
// the tolerance (RFC 2544 §26.1): a first trial at the top rate, then a
// binary search between the best passing and the least failing rate.
func (r *runner) ndr(ctx context.Context, m *measurer, st scenario.Step, sessions []tgen.Session, path tgen.Path) ([]report.Search, error) {
	n := st.Settings.(*scenario.NDR)
	var out []report.Search
	for _, dir := range n.Direction.Each() {
		l := newLoad(dir, n.Size, n.MaxRate, n.Trial, sessions, r.s.Sessions.Flows, path)
		trial := func(pps float64) (report.Trial, error) {
			l.pps = pps
			meas, err := m.run(ctx, l)
			t := report.Trial{Measurement: meas, Passed: meas.LossPct <= n.LossTolerance}
			r.progress("  %s %s B at %s: Rx %.1f kpps, loss %.3f%%%s (%s)", dir, n.Size, rateText(pps), meas.RxKpps, meas.LossPct, refusedText(meas), passText(t.Passed))
			return t, err
		}
		var trials []report.Trial
		first, err := trial(l.pps)
		if err != nil {
			return out, err
		}
		trials = append(trials, first)
		if !first.Passed {
			lo, hi := 0.0, first.TxKpps*1e3 // what the generator reached is the top
			resolution := l.offered(n.Resolution)
			for range n.MaxIterations - 1 {
				if hi-lo <= resolution || ctx.Err() != nil {
					break
				}
				t, err := trial((lo + hi) / 2)
				if err != nil {
					return out, err
				}
				trials = append(trials, t)
				if t.Passed {
					lo = t.OfferedKpps * 1e3
				} else {
					hi = t.OfferedKpps * 1e3
				}
			}
		}
		out = append(out, report.NewSearch(string(dir), n.Size.String(), n.LossTolerance, trials))
	}
	return out, nil
}

func rateText(pps float64) string {
	if pps == 0 {
		return "max"
	}
	return fmt.Sprintf("%.1f kpps", pps/1e3)
}

// refusedText says how much of the loss the lab's own devices refused.
func refusedText(m report.Measurement) string {
	if m.Refused == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d refused by the lab's veths)", m.Refused)
}

func passText(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}

// subscribers runs the subscriber model at each count: both directions at
// once, every flow of every subscriber at its own packet length and rate.
func (r *runner) subscribers(ctx context.Context, m *measurer, st scenario.Step, sessions []tgen.Session, path tgen.Path) ([]report.SubscriberLoad, error) {
	sub := st.Settings.(*scenario.Subscribers)
	var out []report.SubscriberLoad
	for _, n := range sub.Counts {
		if n > len(sessions) {
			return out, fmt.Errorf("%d subscribers, %d sessions", n, len(sessions))
		}
		loads := []load{
			subscriberLoad(scenario.Uplink, sub.Uplink, n, sub.Duration, sessions, path),
			subscriberLoad(scenario.Downlink, sub.Downlink, n, sub.Duration, sessions, path),
		}
		ms, cpu, err := m.together(ctx, loads)
		if err != nil {
			return out, err
		}
		s := report.SubscriberLoad{Subscribers: n, Uplink: ms[0], Downlink: ms[1], CPU: cpu}
		r.progress("  %d subscribers: up %.2f Mbit/s loss %.3f%%, down %.2f Mbit/s loss %.3f%%", n,
			s.Uplink.RxGbps*1e3, s.Uplink.LossPct, s.Downlink.RxGbps*1e3, s.Downlink.LossPct)
		out = append(out, s)
	}
	return out, nil
}

// subscriberLoad is one direction of the model for n subscribers: its
// flows as one stream, each flow's packet length in its share of the
// packets, in sixteenths (the generator's mix has 16 places: 247:175
// packets per second become 9:7). The lab sends the HTTP-like flows as
// UDP, not TCP.
func subscriberLoad(dir scenario.Direction, flows []scenario.Flow, n int, d time.Duration, sessions []tgen.Session, path tgen.Path) load {
	l := load{dir: dir, sizeText: "model", duration: d, sessions: sessions[:n], flows: 1, path: path}
	var pps float64
	for _, f := range flows {
		pps += f.PPS
	}
	for _, f := range flows {
		share := max(int(math.Round(16*f.PPS/pps)), 1)
		l.mix = append(l.mix, scenario.Weighted{Bytes: max(f.PacketBytes()-innerHeaders, minPayload), Weight: share})
	}
	l.pps = pps * float64(n)
	return l
}

// ping measures round trips through the first session.
func (r *runner) ping(ctx context.Context, st scenario.Step) error {
	p := st.Settings.(*scenario.Ping)
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

// cbr sends uplink at a constant rate (or flood) for each size, like ocbr,
// and reports the goodput that arrived.
func (r *runner) cbr(ctx context.Context, m *measurer, st scenario.Step) error {
	t := Traffic{Direction: scenario.Uplink, Sessions: r.sessions, Flows: r.s.Sessions.Flows}
	points, err := cbrSweep(ctx, m, t, tgen.UPF, *st.Settings.(*scenario.CBR), func(pt report.CBR) {
		r.progress("  %d B: %.0f pps, %.1f Mbit/s, loss %.3f%%", pt.Size, pt.PPS, pt.Mbps, pt.LossPct)
	})
	if err != nil {
		return err
	}
	r.run.AddCBR(st.Header(), points...)
	return nil
}

// churn deletes and establishes sessions at a rate, beside the others.
func (r *runner) churn(ctx context.Context, st scenario.Step) error {
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

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// minPayload holds the generator's stamp.
const minPayload = 24
