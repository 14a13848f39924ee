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
	return r.eachDirection(ctx, p, s, cause, func(dir scenario.Direction) string { return fmt.Sprintf("MBR %s %s", rate, dir) },
		func(dir scenario.Direction, name string) (report.Check, error) {
			return r.delivered(ctx, p, dir, tgenSession(s), float64(kbps)*1e3, name)
		})
}

// eachDirection measures the check's session s each way the step asks,
// a line each named by name, refused with the UPF's cause if it refused
// s; then deletes s.
func (r *runner) eachDirection(ctx context.Context, p *scenario.Policing, s smf.Session, cause string,
	name func(scenario.Direction) string, measure func(dir scenario.Direction, name string) (report.Check, error)) ([]report.Check, error) {
	var out []report.Check
	for _, dir := range p.Direction.Each() {
		if cause != "" {
			out = append(out, report.RefusedCheck(name(dir), cause))
			continue
		}
		c, err := measure(dir, name(dir))
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
// passes after the warmup, over the duration, in % of mbr. A try whose
// offer fell to the MBR or below in a slice of it (a generator put off by
// a busy host: the bucket fills meanwhile and its burst passes later, or
// overflows) says nothing of the policer: it is tried again, up to
// policingTries times; if none was clean, the last one's figure is
// judged, and a failure says that the host was measured.
func (r *runner) delivered(ctx context.Context, p *scenario.Policing, dir scenario.Direction, s tgen.Session, mbr float64, name string) (report.Check, error) {
	size := scenario.Size{Bytes: policedPayload(mbr)}
	inner := float64(innerBytes(size.Bytes))
	var t policingTry
	var err error
	for try := 1; try <= policingTries; try++ {
		if t, err = r.policingTry(ctx, p, dir, s, mbr, size); err != nil || t.dips == 0 {
			break
		}
	}
	if err != nil {
		return report.Check{}, err
	}
	seconds := t.to.at.Sub(t.from.at).Seconds()
	bps := float64(t.to.bytes-t.from.bytes) * 8 / seconds
	offered := float64(t.to.sent-t.from.sent) * inner * 8 / seconds
	c := report.Between(name, 100*bps/mbr, 100-p.Tolerance, 100+p.Tolerance, "% of MBR").
		With(fmt.Sprintf("%s delivered of %s offered, %d B packets", bitsText(bps), bitsText(offered), int(inner)))
	if t.dips > 0 && c.Verdict == report.Fail {
		c = c.HostLimited(fmt.Sprintf("%s delivered of %s offered; in %d tries the generator's offer fell to the MBR or below in a slice of the measurement (%d of %d slices in the last): the host, not the policer, was measured",
			bitsText(bps), bitsText(offered), policingTries, t.dips, t.slices))
	}
	return c, nil
}

// policingTries is how often a measurement whose offer dipped is tried;
// policingSlice how often the counts are read meanwhile, to see a dip.
const (
	policingTries = 5
	policingSlice = 50 * time.Millisecond
)

// policingTry is one measurement: the counts at the start and the end of
// the duration, and the slices of warmup and duration whose offer was not
// above the MBR.
type policingTry struct {
	from, to     window
	dips, slices int
}

func (r *runner) policingTry(ctx context.Context, p *scenario.Policing, dir scenario.Direction, s tgen.Session, mbr float64, size scenario.Size) (policingTry, error) {
	inner := float64(innerBytes(size.Bytes))
	pps := p.Offered * mbr / 8 / inner
	m := newMeasurer(r.lab, 0)
	cpus := policingCPUs(m.cpus, pps)
	// A flow per worker: each worker sends flows of its own.
	f, err := m.prepare(newLoad(dir, size, scenario.Rate{PPS: pps}, p.Warmup+p.Duration, []tgen.Session{s}, len(cpus), tgen.UPF))
	if err != nil {
		return policingTry{}, err
	}
	defer f.close()
	sendCtx, cancel := context.WithTimeout(ctx, p.Warmup+p.Duration+time.Second)
	sent := make(chan error, 1)
	go func() {
		_, err := f.gen.Run(sendCtx, tgen.RunOptions{Namespace: f.ns, Device: f.dev, CPUs: cpus, Rate: uint64(pps) / uint64(len(cpus))})
		sent <- err
	}()
	var t policingTry
	last, err := readWindow(f)
	begun := last.at
	for err == nil && ctx.Err() == nil {
		time.Sleep(policingSlice)
		var w window
		if w, err = readWindow(f); err != nil {
			break
		}
		// The first slice holds the generator's start.
		if last.at != begun {
			t.slices++
			if float64(w.sent-last.sent)*inner*8 <= mbr*w.at.Sub(last.at).Seconds() {
				t.dips++
			}
		}
		if t.from.at.IsZero() && w.at.Sub(begun) >= p.Warmup {
			t.from = w
		}
		last = w
		if !t.from.at.IsZero() && w.at.Sub(t.from.at) >= p.Duration {
			t.to = w
			break
		}
	}
	cancel()
	if err = errors.Join(err, ctx.Err(), <-sent); err != nil {
		return policingTry{}, err
	}
	return t, nil
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

// readWindow reads the counts and the time they were read at: between
// the clock before and after the read, taken again if that took longer
// than windowRead, since a reader put off between the counts and the
// clock would credit the window with time it did not count (a 100 ms
// stall is 5 % of a 2 s window).
func readWindow(f *flight) (window, error) {
	for try := 0; ; try++ {
		before := time.Now()
		st, err := f.sink.Stats(nil)
		sent, sentErr := f.gen.Sent()
		after := time.Now()
		if err = errors.Join(err, sentErr); err != nil {
			return window{}, err
		}
		if after.Sub(before) > windowRead && try < windowTries {
			continue
		}
		w := window{bytes: st.Bytes, at: before.Add(after.Sub(before) / 2)}
		for _, n := range sent {
			w.sent += n
		}
		return w, nil
	}
}

// windowRead is how long reading a window's counts may take; windowTries
// how often it is read again when it took longer.
const (
	windowRead  = 2 * time.Millisecond
	windowTries = 50
)

// closedGate offers a session with closed gates traffic each way for
// scenario.GateTime: none may pass (§5.4.2, Gate Status CLOSED).
func (r *runner) closedGate(ctx context.Context, p *scenario.Policing) ([]report.Check, error) {
	s, cause, err := r.checkSession(ctx, smf.Rules{GateClosed: true})
	if err != nil {
		return nil, err
	}
	return r.eachDirection(ctx, p, s, cause, func(dir scenario.Direction) string { return "gate closed " + string(dir) },
		func(dir scenario.Direction, name string) (report.Check, error) {
			return r.gateLeak(ctx, dir, tgenSession(s), name)
		})
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
