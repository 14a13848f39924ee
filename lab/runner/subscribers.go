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

// subscribersKind runs the subscriber model at each count in turn,
// through each target.
type subscribersKind struct{}

func (subscribersKind) measure(ctx context.Context, r *runner, st scenario.Step, targets []target) error {
	sub := st.Settings.(*scenario.Subscribers)
	var out []report.SubscriberLoad
	defer func() { r.run.AddSubscribers(st.Header(), out...) }()
	for _, n := range sub.Counts {
		var loads []report.SubscriberLoad
		for _, tg := range targets {
			l, err := r.subscribers(ctx, sub, n, tg)
			if err != nil {
				return fmt.Errorf("%d subscribers through %s: %w", n, tg.name, err)
			}
			loads = append(loads, l)
		}
		if len(loads) > 1 {
			loads[0].Uplink.Reference, loads[0].Downlink.Reference = &loads[1].Uplink, &loads[1].Downlink
		}
		out = append(out, loads[0])
	}
	return nil
}

// subscribers runs the subscriber model at count n through tg: both
// directions at once, every flow of every subscriber at its own packet
// length and rate.
func (r *runner) subscribers(ctx context.Context, sub *scenario.Subscribers, n int, tg target) (report.SubscriberLoad, error) {
	if n > len(tg.sessions) {
		return report.SubscriberLoad{}, fmt.Errorf("%d subscribers, %d sessions", n, len(tg.sessions))
	}
	loads := []load{
		subscriberLoad(scenario.Uplink, sub.Uplink, n, sub.Duration, tg.sessions, tg.path),
		subscriberLoad(scenario.Downlink, sub.Downlink, n, sub.Duration, tg.sessions, tg.path),
	}
	ms, cpu, err := tg.m.together(ctx, loads)
	if err != nil {
		return report.SubscriberLoad{}, err
	}
	s := report.SubscriberLoad{Subscribers: n, Uplink: ms[0], Downlink: ms[1], CPU: cpu}
	r.progress("  %d subscribers through %s: up %.2f Mbit/s loss %.3f%%, down %.2f Mbit/s loss %.3f%%", n, tg.name,
		s.Uplink.RxGbps*1e3, s.Uplink.LossPct, s.Downlink.RxGbps*1e3, s.Downlink.LossPct)
	return s, nil
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
