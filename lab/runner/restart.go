package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/lab/cpu"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

// A restart step sends steady traffic, in each direction asked for at
// once, and in the middle of it stops the UPF under test with SIGTERM and
// starts it again, as an operator's restart goes; a crash step kills it
// with SIGKILL instead, and starts it again at once. The sink counts what
// the restart cost; N4 is asked every heartbeatEvery whether it answers
// again; the SMF's sessions are then modified, each, to see that the new
// process knows them.

const (
	// stopGrace is how long the UPF has to exit after SIGTERM, as at the
	// end of a run.
	stopGrace = 10 * time.Second
	// heartbeatEvery sets how finely the restart's end is timed.
	heartbeatEvery = 10 * time.Millisecond
)

// restartTimes is how a restart went, from the signal.
type restartTimes struct {
	at       time.Duration // the signal, into the traffic
	stopped  time.Duration // the old process gone
	answered time.Duration // the new one answering N4
	exit     error         // how the old process ended
	recovery time.Time     // in the new one's first Heartbeat Response
	// away is the frames each flight sent from the signal until N4 answered:
	// through the datapath alone, with no UPF process, or one starting.
	away []uint64
}

// restartKind restarts the UPF under test under steady traffic, once:
// with SIGTERM; crashKind, with SIGKILL.
type (
	restartKind struct{}
	crashKind   struct{}
)

func (restartKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	return r.restart(ctx, st, st.Settings.(*scenario.Restart), syscall.SIGTERM)
}

func (crashKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	return r.restart(ctx, st, &st.Settings.(*scenario.Crash).Restart, syscall.SIGKILL)
}

// restart ends the UPF with sig under the step's traffic, and starts it again.
func (r *runner) restart(ctx context.Context, st scenario.Step, rs *scenario.Restart, sig syscall.Signal) error {
	m := newMeasurer(r.lab, 0) // the UPF's process changes: no CPU figure
	var flights []*flight
	defer func() { closeAll(flights) }()
	for _, dir := range rs.Direction.Each() {
		f, err := m.prepare(newLoad(dir, rs.Size, rs.Rate, rs.Duration, r.sessions, r.s.Sessions.Flows, tgen.UPF))
		if err != nil {
			return err
		}
		flights = append(flights, f)
	}
	probe, err := newN4Probe(r.lab)
	if err != nil {
		return err
	}
	defer probe.close()

	times, restartErr := r.underTraffic(ctx, m, flights, rs.At, func(began time.Time) (restartTimes, error) {
		return r.restartUPF(ctx, probe, began, sig, func() []uint64 { return sentSoFar(flights) })
	})
	x := report.Restart{Signal: signalName(sig), AtSeconds: times.at.Seconds(), StopMs: ms(times.stopped), RestartMs: ms(times.answered),
		RecoveryBefore: r.smf.UPF().Recovery, RecoveryAfter: times.recovery, Sessions: len(r.smf.Sessions())}
	var errs []error
	for i, f := range flights {
		d, err := f.acrossRestart()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.l.dir, err))
			continue
		}
		if i < len(times.away) {
			d.SentWhileAway = times.away[i]
		}
		r.progress("  %s: %d sent (%d of them while the UPF was away), %d received, %d lost (%.3f%%), %d duplicates, %d reordered",
			d.Direction, d.TxPackets, d.SentWhileAway, d.RxPackets, d.Lost, d.LossPct, d.Duplicates, d.Reordered)
		x.Directions = append(x.Directions, d)
	}
	if restartErr == nil {
		restartErr = r.sessionsAfterRestart(ctx, &x)
	}
	r.run.AddRestart(st.Header(), x)
	if times.exit != nil && sig == syscall.SIGTERM {
		errs = append(errs, fmt.Errorf("the UPF exited with %v on SIGTERM: see upf.log", times.exit))
	}
	return errors.Join(append(errs, restartErr)...)
}

// underTraffic sends flights for their loads' time and, at into it,
// calls restart with the time the traffic began; it returns once both are
// done and what is on its way has arrived.
func (r *runner) underTraffic(ctx context.Context, m *measurer, flights []*flight, at time.Duration,
	restart func(began time.Time) (restartTimes, error)) (restartTimes, error) {
	var loads []load
	for _, f := range flights {
		loads = append(loads, f.l)
	}
	runCtx, cancel := context.WithTimeout(ctx, maxDuration(loads))
	defer cancel()
	began := time.Now()
	var wg sync.WaitGroup
	for i, f := range flights {
		wg.Go(func() { f.send(runCtx, share(m.cpus, i, len(flights))) })
	}
	var times restartTimes
	var err error
	wg.Go(func() {
		select {
		case <-time.After(at):
			// The restart takes the time it needs, beyond the traffic's.
			times, err = restart(began)
		case <-runCtx.Done():
			err = fmt.Errorf("the traffic ended before the restart at %v: %w", at, context.Cause(runCtx))
		}
	})
	wg.Wait()
	settle(flights)
	for _, f := range flights {
		err = errors.Join(err, f.endRound(cpu.Usage{}, false)) // no CPU figure: the UPF's process changes
	}
	return times, err
}

// restartUPF ends the UPF with sig (SIGTERM: waits for it to exit;
// SIGKILL: for the kernel to reap it), starts it again and waits until N4
// answers. sent counts the frames sent so far, by flight, to tell those
// sent meanwhile.
func (r *runner) restartUPF(ctx context.Context, probe *n4Probe, began time.Time, sig syscall.Signal, sent func() []uint64) (restartTimes, error) {
	var t restartTimes
	if gone, why := r.upf.exited(); gone {
		return t, fmt.Errorf("the UPF had exited (%v) before the restart: see upf.log", why)
	}
	name := signalName(sig)
	fmt.Fprintf(r.upf.log, "\n# upflab: restart: %s to pid %d\n", name, r.upf.pid())
	before := sent()
	signalled := time.Now()
	t.at = signalled.Sub(began)
	var exit, err error
	if sig == syscall.SIGKILL {
		exit = r.upf.kill()
	} else {
		exit, err = r.upf.terminate(stopGrace)
	}
	t.stopped, t.exit = time.Since(signalled), exit
	if err != nil {
		return t, err
	}
	fmt.Fprintf(r.upf.log, "# upflab: restart: the UPF exited (%v) after %v; starting it again\n", exit, t.stopped.Round(time.Millisecond))
	if err := r.upf.start(); err != nil {
		return t, err
	}
	t.recovery, err = probe.waitForUPF(ctx, r.upf, r.s.UPF.Startup)
	t.answered = time.Since(signalled)
	for i, n := range sent() {
		t.away = append(t.away, n-before[i])
	}
	if err != nil {
		return t, fmt.Errorf("after the restart, N4: %w", err)
	}
	r.progress("  %s %.2f s in; the UPF exited after %v, pid %d answered N4 %v after %s",
		name, t.at.Seconds(), t.stopped.Round(time.Millisecond), r.upf.pid(), t.answered.Round(time.Millisecond), name)
	return t, nil
}

// signalName is a signal as the report names it: SIGTERM, SIGKILL.
func signalName(sig syscall.Signal) string {
	if sig == syscall.SIGKILL {
		return "SIGKILL"
	}
	return "SIGTERM"
}

// sentSoFar is the frames each flight has sent; 0 where it cannot tell.
func sentSoFar(flights []*flight) []uint64 {
	out := make([]uint64, len(flights))
	for i, f := range flights {
		if flows, err := f.gen.Sent(); err == nil {
			for _, n := range flows {
				out[i] += n
			}
		}
	}
	return out
}

// acrossRestart is what the flight's sink counted, with the duplicates
// and reordering a restart could cause.
func (f *flight) acrossRestart() (report.RestartDirection, error) {
	meas, err := f.result()
	if err != nil {
		return report.RestartDirection{}, err
	}
	sent, err := f.gen.Sent()
	if err != nil {
		return report.RestartDirection{}, err
	}
	st, err := f.sink.Stats(sent)
	if err != nil {
		return report.RestartDirection{}, err
	}
	return report.RestartDirection{Measurement: meas, Lost: st.Lost, Duplicates: st.Duplicates, Reordered: st.Reordered}, nil
}

// sessionsAfterRestart modifies every session of the SMF's, as a path
// switch to the lab's gNB, where they are: a UPF that lost them answers
// Session context not found. That is a result, not an error; requests
// that were not answered, or not sent, are. The SMF emulator takes no
// notice of the restart.
func (r *runner) sessionsAfterRestart(ctx context.Context, x *report.Restart) error {
	phase, err := r.smf.SwitchPath(ctx, topo.GNBN3)
	x.SessionsAccepted = phase.Accepted
	r.progress("  after the restart, %s; Recovery Time Stamp %s", phase, recoveryWord(x))
	if err != nil && (phase.Unanswered > 0 || phase.Sent < x.Sessions) {
		return fmt.Errorf("sessions after the restart: %w", err)
	}
	return nil
}

func recoveryWord(x *report.Restart) string {
	if x.SameRecovery() {
		return "unchanged"
	}
	return fmt.Sprintf("%v, was %v", x.RecoveryAfter, x.RecoveryBefore)
}

// n4Probe asks whether a PFCP peer is there, from a port of its own at the
// SMF's address, leaving the SMF emulator's port to the emulator. Its
// Heartbeat Requests carry the emulator's Recovery Time Stamp, which it
// asks the emulator for first: a UPF given another could take the SMF for
// restarted and drop its sessions (TS 29.244 §6.2.2).
type n4Probe struct {
	conn     *net.UDPConn
	seq      uint32
	recovery time.Time
	buf      []byte
}

func newN4Probe(lab topo.Lab) (*n4Probe, error) {
	p := &n4Probe{buf: make([]byte, 1500)}
	err := lab.Do(lab.SMF, func() (err error) {
		p.conn, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(topo.SMFN4, 0)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("runner: N4 probe: %w", err)
	}
	// The emulator answers in microseconds; a second covers a busy host.
	var recovery time.Time
	for range 10 {
		if recovery, err = p.ask(netip.AddrPortFrom(topo.SMFN4, smf.PFCPPort), 100*time.Millisecond); err == nil {
			p.recovery = recovery
			return p, nil
		}
	}
	p.close()
	return nil, fmt.Errorf("runner: N4 probe: the SMF emulator's Recovery Time Stamp: %w", err)
}

func (p *n4Probe) close() { p.conn.Close() }

// waitForUPF asks the UPF every heartbeatEvery until it answers, exits,
// limit passes or ctx ends, and gives the Recovery Time Stamp it answered
// with.
func (p *n4Probe) waitForUPF(ctx context.Context, upf *process, limit time.Duration) (time.Time, error) {
	to := netip.AddrPortFrom(topo.UPFN4, smf.PFCPPort)
	deadline := time.Now().Add(limit)
	for {
		next := time.Now().Add(heartbeatEvery)
		recovery, err := p.ask(to, heartbeatEvery)
		switch {
		case err == nil:
			return recovery, nil
		case ctx.Err() != nil:
			return time.Time{}, ctx.Err()
		case time.Now().After(deadline):
			return time.Time{}, fmt.Errorf("no Heartbeat Response within %v (upf.startup)", limit)
		}
		if gone, why := upf.exited(); gone {
			return time.Time{}, fmt.Errorf("the UPF exited (%v) before it answered: see upf.log", why)
		}
		time.Sleep(time.Until(next))
	}
}

// ask sends a Heartbeat Request to a peer and gives the Recovery Time
// Stamp of the first Heartbeat Response to come within wait: to this
// request, or to one the peer received before it could answer.
func (p *n4Probe) ask(to netip.AddrPort, wait time.Duration) (time.Time, error) {
	p.seq++
	req := message.NewHeartbeatRequest(p.seq, ie.NewRecoveryTimeStamp(p.recovery), nil)
	b := make([]byte, req.MarshalLen())
	if err := req.MarshalTo(b); err != nil {
		return time.Time{}, err
	}
	if _, err := p.conn.WriteToUDPAddrPort(b, to); err != nil {
		return time.Time{}, err
	}
	p.conn.SetReadDeadline(time.Now().Add(wait))
	for {
		n, from, err := p.conn.ReadFromUDPAddrPort(p.buf)
		if err != nil {
			return time.Time{}, err
		}
		m, err := message.Parse(p.buf[:n])
		resp, ok := m.(*message.HeartbeatResponse)
		if err != nil || !ok || from.Addr().Unmap() != to.Addr() || from.Port() != to.Port() || resp.RecoveryTimeStamp == nil {
			continue
		}
		return resp.RecoveryTimeStamp.RecoveryTimeStamp()
	}
}
