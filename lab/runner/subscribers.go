package runner

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
)

// subscribersKind runs the subscriber model at each count in turn.
type subscribersKind struct{}

func (subscribersKind) measure(ctx context.Context, r *runner, m *measurer, st scenario.Step, sessions []tgen.Session, path tgen.Path) error {
	loads, err := r.subscribers(ctx, m, st, sessions, path)
	if err != nil {
		return err
	}
	for i := range loads {
		for _, x := range []*report.Measurement{&loads[i].Uplink, &loads[i].Downlink} {
			pairReference(r.refs, subscribersKey(st, x.Direction, loads[i].Subscribers), path, x, &x.Reference)
		}
	}
	if r.ownResults(path) {
		r.run.AddSubscribers(st.Header(), loads...)
	}
	return nil
}

func subscribersKey(st scenario.Step, direction string, n int) string {
	return fmt.Sprintf("%s/%d", refKey(st, direction), n)
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
		l.mix = append(l.mix, scenario.Weighted{Bytes: max(f.PacketBytes()-innerHeaders, scenario.MinPayload), Weight: share})
	}
	l.pps = pps * float64(n)
	return l
}
