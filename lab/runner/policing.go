package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/tgen"
)

// policingKind checks a UPF's QER MBR: for each rate, a session of its
// own with that MBR both ways is offered more than it, one direction at a
// time; what the sink counts after the warmup, over the duration, is the
// rate delivered, in bits of the inner IP packets (what a QoS flow's MBR
// limits, TS 23.501 §5.7.1.1). Then a session with closed gates.
type policingKind struct{}

func (policingKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	p := st.Settings.(*scenario.Policing)
	for _, mbr := range p.MBR {
		checks, err := r.policeAt(ctx, p, mbr)
		r.run.AddChecks(st.Header(), checks...)
		if err != nil {
			return fmt.Errorf("MBR %s: %w", mbr, err)
		}
	}
	if !p.Gate {
		return nil
	}
	checks, err := r.closedGate(ctx, p)
	r.run.AddChecks(st.Header(), checks...)
	return err
}

// policedPPS is the packets a second a policing measurement wants to
// deliver at the least, so that one packet more or less is 0.1 %.
const policedPPS = 1000

// policedPayload is the payload that delivers about policedPPS at bps:
// 1400 bytes from 12 Mbit/s up, the 24 of the stamp at 64 kbit/s (154
// packets a second: 0.2 % each over 3 s).
func policedPayload(bps float64) int {
	return min(max(int(bps/8/policedPPS)-innerHeaders, scenario.MinPayload), 1400)
}

// policeAt measures the rate delivered under an MBR of rate, both ways.
func (r *runner) policeAt(ctx context.Context, p *scenario.Policing, rate scenario.Rate) ([]report.Check, error) {
	kbps := uint64(math.Round(rate.BPS / 1e3))
	s, cause, err := r.checkSession(ctx, smf.Rules{MBR: &smf.Bitrate{UplinkKbps: kbps, DownlinkKbps: kbps}})
	if err != nil {
		return nil, err
	}
	var out []report.Check
	for _, dir := range p.Direction.Each() {
		name := fmt.Sprintf("MBR %s %s", rate, dir)
		if cause != "" {
			out = append(out, report.RefusedCheck(name, cause))
			continue
		}
		c, err := r.delivered(ctx, p, dir, tgenSession(s), float64(kbps)*1e3, name)
		if err != nil {
			return out, errors.Join(err, r.dropSessions(ctx, s))
		}
		out = append(out, c)
	}
	if cause != "" {
		return out, nil
	}
	return out, r.dropSessions(ctx, s)
}

// delivered offers mbr × p.Offered one way through s and measures what
// passes after the warmup, over the duration, in % of mbr.
func (r *runner) delivered(ctx context.Context, p *scenario.Policing, dir scenario.Direction, s tgen.Session, mbr float64, name string) (report.Check, error) {
	size := scenario.Size{Bytes: policedPayload(mbr)}
	inner := float64(innerBytes(size.Bytes))
	pps := p.Offered * mbr / 8 / inner
	m := newMeasurer(r.lab, 0)
	cpus := policingCPUs(m.cpus, pps)
	// A flow per worker: each worker sends flows of its own.
	f, err := m.prepare(newLoad(dir, size, scenario.Rate{PPS: pps}, p.Warmup+p.Duration, []tgen.Session{s}, len(cpus), tgen.UPF))
	if err != nil {
		return report.Check{}, err
	}
	defer f.close()
	sendCtx, cancel := context.WithTimeout(ctx, p.Warmup+p.Duration+time.Second)
	sent := make(chan error, 1)
	go func() {
		_, err := f.gen.Run(sendCtx, tgen.RunOptions{Namespace: f.ns, Device: f.dev, CPUs: cpus, Rate: uint64(pps) / uint64(len(cpus))})
		sent <- err
	}()
	time.Sleep(p.Warmup)
	from, err := readWindow(f)
	var to window
	if err == nil {
		time.Sleep(p.Duration)
		to, err = readWindow(f)
	}
	cancel()
	if err = errors.Join(err, <-sent); err != nil {
		return report.Check{}, err
	}
	seconds := to.at.Sub(from.at).Seconds()
	bps := float64(to.bytes-from.bytes) * 8 / seconds
	offered := float64(to.sent-from.sent) * inner * 8 / seconds
	c := report.Between(name, 100*bps/mbr, 100-p.Tolerance, 100+p.Tolerance, "% of MBR").
		With(fmt.Sprintf("%s delivered of %s offered, %d B packets", bitsText(bps), bitsText(offered), int(inner)))
	if offered < mbr*(1+p.Tolerance/100) {
		c = c.Failed(fmt.Sprintf("the generator offered only %s, not above the MBR: nothing to police", bitsText(offered)))
	}
	return c, nil
}

// policingWorkerPPS is what one paced worker keeps up at 1428-byte
// packets while its core also runs the UPF's XDP and the sink (a veth
// passes a frame on in the sending core): about 125 kpps on the 2-vCPU VM.
// Above this share the rate is sent from every core, the policer's
// bucket shared among them.
const policingWorkerPPS = 50_000

// policingCPUs are the cores to offer pps from: one, or all when one
// would fall short; a worker that falls behind leaves the bucket time to
// fill, and its burst then passes above the MBR.
func policingCPUs(cpus []int, pps float64) []int {
	if pps > policingWorkerPPS {
		return cpus
	}
	return cpus[:1]
}

// window is a moment of a flight: what its sink counted (inner IP bytes)
// and its generator sent by then.
type window struct {
	bytes, sent uint64
	at          time.Time
}

func readWindow(f *flight) (window, error) {
	st, err := f.sink.Stats(nil)
	sent, sentErr := f.gen.Sent()
	w := window{bytes: st.Bytes, at: time.Now()}
	for _, n := range sent {
		w.sent += n
	}
	return w, errors.Join(err, sentErr)
}

// closedGate offers a session with closed gates traffic each way for
// scenario.GateTime: none may pass (§5.4.2, Gate Status CLOSED).
func (r *runner) closedGate(ctx context.Context, p *scenario.Policing) ([]report.Check, error) {
	s, cause, err := r.checkSession(ctx, smf.Rules{GateClosed: true})
	if err != nil {
		return nil, err
	}
	var out []report.Check
	for _, dir := range p.Direction.Each() {
		name := "gate closed " + string(dir)
		if cause != "" {
			out = append(out, report.RefusedCheck(name, cause))
			continue
		}
		c, err := r.gateLeak(ctx, dir, tgenSession(s), name)
		if err != nil {
			return out, errors.Join(err, r.dropSessions(ctx, s))
		}
		out = append(out, c)
	}
	if cause != "" {
		return out, nil
	}
	return out, r.dropSessions(ctx, s)
}

// gatePPS is what a closed gate is offered: enough to see any leak.
const gatePPS = 10_000

// gateLeak sends at gatePPS through s one way, and counts what passed.
func (r *runner) gateLeak(ctx context.Context, dir scenario.Direction, s tgen.Session, name string) (report.Check, error) {
	m := newMeasurer(r.lab, 0)
	f, err := m.prepare(newLoad(dir, scenario.Size{Bytes: 64}, scenario.Rate{PPS: gatePPS}, scenario.GateTime, []tgen.Session{s}, 1, tgen.UPF))
	if err != nil {
		return report.Check{}, err
	}
	defer f.close()
	count := uint64(gatePPS * scenario.GateTime.Seconds())
	if err := sendBurst(ctx, f, m.cpus[0], count, gatePPS); err != nil {
		return report.Check{}, err
	}
	st, err := f.sink.Stats(nil)
	return report.AtMost(name, float64(st.Packets), 0, "frames").With(fmt.Sprintf("of %d sent", count)), err
}

// bitsText writes a bit rate as a scenario does: 64kbps, 1.5Mbps.
func bitsText(bps float64) string {
	for _, u := range []struct {
		name  string
		scale float64
	}{{"Gbps", 1e9}, {"Mbps", 1e6}, {"kbps", 1e3}} {
		if bps >= u.scale {
			return fmt.Sprintf("%.4g%s", bps/u.scale, u.name)
		}
	}
	return fmt.Sprintf("%.4gbps", bps)
}
