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

// usageKind checks a UPF's usage reports and quotas against the sinks.
// Every report must carry what the sinks received since the one before,
// to the byte and the packet, each way: the volume of the inner IP
// packets, as TS 29.244 §5.2.2.2 counts it, of the frames the UPF let
// through (a URR measures after QoS enforcement unless it asks for MBQE).
// The bursts go between reports, so that a report cannot fall in one.
type usageKind struct{}

// burstPPS sends a burst: 100 frames take a millisecond.
const burstPPS = 100_000

func (usageKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	u := st.Settings.(*scenario.Usage)
	checks, err := r.usageReports(ctx, u)
	r.run.AddChecks(st.Header(), checks...)
	if err != nil {
		return err
	}
	if u.Quota > 0 {
		checks, err := r.volumeQuota(ctx, u)
		r.run.AddChecks(st.Header(), checks...)
		if err != nil {
			return err
		}
	}
	if u.TimeQuota > 0 {
		checks, err := r.timeQuota(ctx, u)
		r.run.AddChecks(st.Header(), checks...)
		return err
	}
	return nil
}

// duplex is traffic both ways through one session, in bursts of known
// frames, and the reports of its URR as they come.
type duplex struct {
	s       smf.Session
	flights [2]*flight // uplink, downlink
	cpus    [2]int
	reports chan smf.Usage
}

func (r *runner) newDuplex(u *scenario.Usage, s smf.Session) (*duplex, error) {
	m := newMeasurer(r.lab, 0)
	d := &duplex{s: s, reports: make(chan smf.Usage, 64)}
	for i, dir := range []scenario.Direction{scenario.Uplink, scenario.Downlink} {
		f, err := m.prepare(newLoad(dir, u.Size, scenario.Rate{PPS: burstPPS}, time.Second, []tgen.Session{tgenSession(s)}, 1, tgen.UPF))
		if err != nil {
			d.close(r)
			return nil, err
		}
		d.flights[i], d.cpus[i] = f, m.cpus[i%len(m.cpus)]
	}
	r.smf.OnReport(func(x smf.Report) {
		for _, us := range x.Usage {
			if us.CPSEID == s.CPSEID {
				select {
				case d.reports <- us:
				default: // a UPF that floods us with reports fails the check anyway
				}
			}
		}
	})
	return d, nil
}

func (d *duplex) close(r *runner) {
	r.smf.OnReport(nil)
	for _, f := range d.flights {
		if f != nil {
			f.close()
		}
	}
}

// burst sends n frames each way, at once, and waits until they are in.
func (d *duplex) burst(ctx context.Context, n int) error {
	errs := make(chan error, 2)
	for i, f := range d.flights {
		go func() { errs <- sendBurst(ctx, f, d.cpus[i], uint64(n), burstPPS) }()
	}
	return errors.Join(<-errs, <-errs)
}

// counted is what the sinks have received so far, each way.
func (d *duplex) counted() (up, down smf.Volume, err error) {
	var vols [2]smf.Volume
	for i, f := range d.flights {
		st, e := f.sink.Stats(nil)
		vols[i], err = smf.Volume{Bytes: st.Bytes, Packets: st.Packets}, errors.Join(err, e)
	}
	return vols[0], vols[1], err
}

// next is the next usage report of the session's URR, within wait.
func (d *duplex) next(ctx context.Context, wait time.Duration) (smf.Usage, error) {
	select {
	case u := <-d.reports:
		return u, nil
	case <-time.After(wait):
		return smf.Usage{}, errNoReport
	case <-ctx.Done():
		return smf.Usage{}, ctx.Err()
	}
}

var errNoReport = errors.New("no usage report came")

// tally sums what the reports of one trigger carried against what the
// sinks received meanwhile, each way.
type tally struct {
	reports              int
	reported, received   [2]smf.Volume // uplink, downlink
	bytesOff, packetsOff [2]uint64
	missing              string // why a report that should have come did not
	// lastAt is when the last report came; late counts the bursts that
	// ended too near the next report's time (periodic): a host that late
	// may see a report taken in the middle of a burst.
	lastAt time.Time
	late   int
}

// add compares report u with what the sinks received since the last
// report, up and down.
func (t *tally) add(u smf.Usage, up, down smf.Volume) {
	t.reports++
	for i, pair := range [][2]smf.Volume{{u.Uplink, up}, {u.Downlink, down}} {
		rep, got := pair[0], pair[1]
		t.reported[i], t.received[i] = plus(t.reported[i], rep), plus(t.received[i], got)
		t.bytesOff[i] += absDiff(rep.Bytes, got.Bytes)
		t.packetsOff[i] += absDiff(rep.Packets, got.Packets)
	}
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// checks are the tally's verdicts: bytes and packets off, each way.
func (t *tally) checks(what string) []report.Check {
	var out []report.Check
	for i, dir := range []string{"uplink", "downlink"} {
		note := fmt.Sprintf("%d reports: %d bytes in %d packets reported, %d in %d received",
			t.reports, t.reported[i].Bytes, t.reported[i].Packets, t.received[i].Bytes, t.received[i].Packets)
		bytes := report.AtMost(what+" "+dir+": bytes off", float64(t.bytesOff[i]), 0, "bytes").With(note)
		packets := report.AtMost(what+" "+dir+": packets off", float64(t.packetsOff[i]), 0, "packets")
		if t.missing != "" {
			bytes, packets = bytes.Failed(t.missing), packets.Failed(t.missing)
		}
		if t.late > 0 {
			late := fmt.Sprintf("%s; %d of the bursts ended more than half a period after the report before them: the host was late, and a report may have been taken in the middle of one",
				note, t.late)
			if bytes.Verdict == report.Fail {
				bytes = bytes.HostLimited(late)
			}
			if packets.Verdict == report.Fail {
				packets = packets.HostLimited(late)
			}
		}
		out = append(out, bytes, packets)
	}
	return out
}

// since is what the sinks received from before to now.
func since(before, now [2]smf.Volume) (up, down smf.Volume) {
	return smf.Volume{Bytes: now[0].Bytes - before[0].Bytes, Packets: now[0].Packets - before[0].Packets},
		smf.Volume{Bytes: now[1].Bytes - before[1].Bytes, Packets: now[1].Packets - before[1].Packets}
}

// usageReports checks periodic, threshold and final reports.
func (r *runner) usageReports(ctx context.Context, u *scenario.Usage) ([]report.Check, error) {
	var periodic, threshold, final tally
	var out []report.Check
	names := []string{"periodic reports", "threshold reports"}
	for k, rules := range []*smf.URR{{Period: u.Period}, {VolThreshold: u.Threshold}} {
		if k == 1 && u.Threshold == 0 {
			break
		}
		s, cause, err := r.checkSession(ctx, smf.Rules{URR: rules})
		if err != nil {
			return out, err
		}
		if cause != "" {
			out = append(out, report.RefusedCheck(names[k], cause))
			continue
		}
		d, err := r.newDuplex(u, s)
		if err == nil {
			if k == 0 {
				err = d.periodic(ctx, u, &periodic)
			} else {
				err = d.threshold(ctx, u, &threshold)
			}
			if err == nil {
				err = d.final(ctx, r, u, &final)
			}
			d.close(r)
		}
		if err != nil {
			return out, errors.Join(err, r.dropSessions(ctx, s))
		}
	}
	out = append(out, periodic.checks("periodic reports")...)
	if u.Threshold > 0 {
		out = append(out, threshold.checks("threshold reports")...)
	}
	return append(out, final.checks("final reports")...), nil
}

// periodic waits for the first periodic report, then sends a burst a
// quarter of a period after each report and checks the next.
func (d *duplex) periodic(ctx context.Context, u *scenario.Usage, t *tally) error {
	wait := 2*u.Period + time.Second
	var last [2]smf.Volume
	for k := 0; k <= u.Reports; k++ {
		if k > 0 {
			time.Sleep(u.Period / 4)
			if err := d.burst(ctx, u.Burst); err != nil {
				return err
			}
			if time.Since(t.lastAt) > u.Period/2 {
				t.late++
			}
		}
		missing := fmt.Sprintf("periodic report %d of %d did not come within %s", k+1, u.Reports+1, wait)
		if came, err := d.tallyNext(ctx, wait, &last, t, missing); !came || err != nil {
			return err
		}
	}
	return nil
}

// tallyNext waits up to wait for the next report and tallies it against
// what the sinks counted since last, which it moves on; a report that
// does not come is t's missing, and came is false.
func (d *duplex) tallyNext(ctx context.Context, wait time.Duration, last *[2]smf.Volume, t *tally, missing string) (came bool, err error) {
	rep, err := d.next(ctx, wait)
	if errors.Is(err, errNoReport) {
		t.missing = missing
		return false, nil
	}
	if err != nil {
		return false, err
	}
	now, err := d.volumes()
	if err != nil {
		return false, err
	}
	up, down := since(*last, now)
	t.add(rep, up, down)
	*last, t.lastAt = now, rep.At
	return true, nil
}

func (d *duplex) volumes() ([2]smf.Volume, error) {
	up, down, err := d.counted()
	return [2]smf.Volume{up, down}, err
}

// threshold sends, each round, bursts that bring the volume since the
// last report just short of the threshold, waits to see that no report
// comes, then the uplink frames that cross it, back to back: a report
// taken between two directions' frames would split what crossed it.
func (d *duplex) threshold(ctx context.Context, u *scenario.Usage, t *tally) error {
	inner := uint64(innerBytes(u.Size.Bytes))
	under := (u.Threshold - 1) / (2 * inner) // frames each way that stay below it
	cross := (u.Threshold - 2*under*inner + inner - 1) / inner
	var last [2]smf.Volume
	for k := 0; k < u.Reports; k++ {
		for left := int(under); left > 0; left -= u.Burst {
			if err := d.burst(ctx, min(left, u.Burst)); err != nil {
				return err
			}
		}
		if early, err := d.next(ctx, 300*time.Millisecond); err == nil {
			t.missing = fmt.Sprintf("a report (trigger %#x) came before the threshold was reached", early.Trigger)
			return nil
		}
		if err := sendBurst(ctx, d.flights[0], d.cpus[0], cross, burstPPS); err != nil {
			return err
		}
		missing := fmt.Sprintf("no report within 2s of crossing the threshold, round %d", k+1)
		if came, err := d.tallyNext(ctx, 2*time.Second, &last, t, missing); !came || err != nil {
			return err
		}
	}
	return nil
}

// final sends a burst, deletes the session and checks the usage of the
// Deletion Response, with any report that came after the last one
// counted, against everything since.
func (d *duplex) final(ctx context.Context, r *runner, u *scenario.Usage, t *tally) error {
	before, err := d.volumes()
	if err != nil {
		return err
	}
	if err := d.burst(ctx, u.Burst); err != nil {
		return err
	}
	now, err := d.volumes()
	if err != nil {
		return err
	}
	_, finals, err := r.smf.DeleteSessions(ctx, []smf.Session{d.s})
	if err != nil {
		return err
	}
	if len(finals) == 0 {
		t.missing = "the Session Deletion Response carried no usage report"
		return nil
	}
	rep := finals[0]
	for _, x := range append(d.queued(), finals[1:]...) {
		rep.Uplink = plus(rep.Uplink, x.Uplink)
		rep.Downlink = plus(rep.Downlink, x.Downlink)
	}
	up, down := since(before, now)
	t.add(rep, up, down)
	return nil
}

// queued are the reports that came and were not taken yet.
func (d *duplex) queued() []smf.Usage {
	var out []smf.Usage
	for {
		select {
		case u := <-d.reports:
			out = append(out, u)
		default:
			return out
		}
	}
}

func plus(a, b smf.Volume) smf.Volume {
	return smf.Volume{Bytes: a.Bytes + b.Bytes, Packets: a.Packets + b.Packets}
}
