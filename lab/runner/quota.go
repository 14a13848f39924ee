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

// The quotas of a usage step: when a volume or time quota is spent, the UP
// function stops forwarding what the URR measures (TS 29.244 §5.2.2.3.1).

// volumeQuota offers a session with a volume quota twice the quota,
// uplink: the sink may receive no byte past it, and the whole of it but
// what is too little for one more packet.
func (r *runner) volumeQuota(ctx context.Context, u *scenario.Usage) ([]report.Check, error) {
	const past, unused = "volume quota: bytes past it", "volume quota: bytes of it not let through"
	s, cause, err := r.checkSession(ctx, smf.Rules{URR: &smf.URR{VolQuota: u.Quota}})
	if err != nil || cause != "" {
		return []report.Check{report.RefusedCheck(past, cause), report.RefusedCheck(unused, cause)}, err
	}
	inner := uint64(innerBytes(u.Size.Bytes))
	n := (2*u.Quota + inner - 1) / inner
	m := newMeasurer(r.lab, 0)
	f, err := m.prepare(newLoad(scenario.Uplink, u.Size, scenario.Rate{PPS: burstPPS}, time.Second, []tgen.Session{tgenSession(s)}, 1, tgen.UPF))
	if err != nil {
		return nil, errors.Join(err, r.dropSessions(ctx, s))
	}
	defer f.close()
	if err := sendBurst(ctx, f, m.cpus[0], n, burstPPS); err != nil {
		return nil, errors.Join(err, r.dropSessions(ctx, s))
	}
	st, err := f.sink.Stats(nil)
	if err != nil {
		return nil, errors.Join(err, r.dropSessions(ctx, s))
	}
	over, short := uint64(0), uint64(0)
	if st.Bytes > u.Quota {
		over = st.Bytes - u.Quota
	} else {
		short = u.Quota - st.Bytes
	}
	note := fmt.Sprintf("%d bytes in %d packets received of a quota of %d, %d sent", st.Bytes, st.Packets, u.Quota, n)
	return []report.Check{
		report.AtMost(past, float64(over), 0, "bytes").With(note),
		report.AtMost(unused, float64(short), float64(inner-1), "bytes").With(fmt.Sprintf("less than a packet of %d bytes", inner)),
	}, r.dropSessions(ctx, s)
}

// timeQuotaPPS is the traffic under a time quota: a frame every 100 µs
// times its end well within the limit.
const timeQuotaPPS = 10_000

// timeQuota sends steady uplink traffic through a session with a time
// quota from its establishment: the last frame must arrive within
// u.Within of the quota's expiry, and not before it (less 100 ms, for the
// time the Establishment Response took to come).
func (r *runner) timeQuota(ctx context.Context, u *scenario.Usage) ([]report.Check, error) {
	name := fmt.Sprintf("time quota %s: traffic stopped after its expiry", u.TimeQuota)
	s, cause, err := r.checkSession(ctx, smf.Rules{URR: &smf.URR{TimeQuota: u.TimeQuota}})
	if err != nil || cause != "" {
		return []report.Check{report.RefusedCheck(name, cause)}, err
	}
	granted := time.Now()
	m := newMeasurer(r.lab, 0)
	total := u.TimeQuota + u.Within + time.Second
	f, err := m.prepare(newLoad(scenario.Uplink, u.Size, scenario.Rate{PPS: timeQuotaPPS}, total, []tgen.Session{tgenSession(s)}, 1, tgen.UPF))
	if err != nil {
		return nil, errors.Join(err, r.dropSessions(ctx, s))
	}
	defer f.close()
	sendCtx, cancel := context.WithTimeout(ctx, total)
	defer cancel()
	sent := make(chan error, 1)
	go func() {
		_, err := f.gen.Run(sendCtx, tgen.RunOptions{Namespace: f.ns, Device: f.dev, CPUs: m.cpus[:1], Rate: timeQuotaPPS})
		sent <- err
	}()
	last, received, err := lastArrival(sendCtx, f)
	if err = errors.Join(err, <-sent); err != nil {
		return nil, errors.Join(err, r.dropSessions(ctx, s))
	}
	after := last.Sub(granted.Add(u.TimeQuota))
	c := report.Between(name, float64(after.Microseconds())/1e3, -100, float64(u.Within.Milliseconds()), "ms").
		With(fmt.Sprintf("%d frames received, the last %s after the grant", received, last.Sub(granted).Round(time.Millisecond)))
	if received == 0 {
		c = c.Failed("no frame passed while the quota lasted")
	}
	return []report.Check{c}, r.dropSessions(ctx, s)
}

// lastArrival watches f's sink until ctx ends: when the last frame came,
// to a poll's 2 ms, and how many came.
func lastArrival(ctx context.Context, f *flight) (time.Time, uint64, error) {
	var last time.Time
	var seen uint64
	for ctx.Err() == nil {
		st, err := f.sink.Stats(nil)
		if err != nil {
			return last, seen, err
		}
		if st.Packets != seen {
			seen, last = st.Packets, time.Now()
		}
		time.Sleep(2 * time.Millisecond)
	}
	return last, seen, nil
}
