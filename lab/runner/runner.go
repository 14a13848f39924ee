// Package runner runs a lab scenario: it builds the topology, and a twin
// of it for the reference forwarder, starts the UPF under test,
// establishes the sessions through the SMF emulator, runs every step, and
// records the results in a report.Run.
//
// Every measurement of a run is made on the same machine, with the same
// generator and sink. The steps compared with the reference forwarder
// measure it and the UPF in turn, in labs built alike: the UPF's, and the
// twin where the reference forwarder stands on the UPF's n3 and n6.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

// Options are how to run, beyond what the scenario says.
type Options struct {
	UPFD     string    // the upfd binary, for a scenario whose UPF is upfd
	Version  string    // of the UPF under test, for the report
	Dir      string    // where upf.yaml and upf.log go; the results too
	Keep     bool      // leave the labs up afterwards, for a look
	Progress io.Writer // a line per measurement as the run goes; nil: none
}

// Run runs s. The report holds what was measured, also when a step failed
// (its error is in the step) or ctx ended (the steps not run are absent).
func Run(ctx context.Context, s *scenario.Scenario, o Options) (*report.Run, error) {
	r := &runner{s: s, o: o}
	if o.Progress == nil {
		r.o.Progress = io.Discard
	}
	run := report.New(s.Name, report.UPF{Name: s.UPF.Name, Version: o.Version},
		report.Sessions{Count: s.Sessions.Count, Profile: string(s.Sessions.Profile), Flows: s.Sessions.Flows})
	r.run = run
	err := r.all(ctx)
	for i := len(r.teardown) - 1; i >= 0; i-- {
		err = errors.Join(err, r.teardown[i]())
	}
	run.Finish()
	return run, err
}

type runner struct {
	s        *scenario.Scenario
	o        Options
	run      *report.Run
	lab      topo.Lab
	refLab   *topo.Lab // the reference forwarder's twin, if the run measures it
	upf      *process
	smf      *smf.Client
	sessions []tgen.Session
	teardown []func() error // the labs to take down, once the UPF is stopped
}

// RefLabName is the name of the twin lab where a run measures the
// reference forwarder beside the UPF under test in the lab called lab.
func RefLabName(lab string) string { return lab + "-ref" }

func (r *runner) all(ctx context.Context) (err error) {
	if err := os.MkdirAll(r.o.Dir, 0o755); err != nil {
		return err
	}
	t := r.s.Topology
	r.progress("lab %s: building the topology", t.Name)
	if r.lab, err = r.up(topo.Options{Name: t.Name, N9: t.N9, Queues: t.Queues}); err != nil {
		return err
	}
	r.placement()
	// The reference forwarder stands for the whole run: in the twin, and
	// in the UPF's namespace when it is the UPF under test.
	if r.s.MeasuresReference() {
		r.progress("lab %s: the reference forwarder's twin of it", RefLabName(t.Name))
		twin, err := r.up(topo.Options{Name: RefLabName(t.Name), Queues: t.Queues})
		if err != nil {
			return err
		}
		r.refLab = &twin
		fwd, err := attachReference(twin)
		if err != nil {
			return err
		}
		defer fwd.Close()
	}
	if r.s.UPF.Kind == scenario.UPFReference {
		fwd, err := attachReference(r.lab)
		if err != nil {
			return err
		}
		defer fwd.Close()
	} else {
		// Stopped also when the rest of the start fails: a pinned upfd
		// forwards on until its pins are removed.
		err = r.startUPF(ctx)
		if r.upf != nil {
			defer func() { err = errors.Join(err, r.stopUPF()) }()
		}
		if err != nil {
			return err
		}
	}
	for i, st := range r.s.Steps {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if _, ok := stepKinds[st.Kind].(comparedKind); !ok && r.s.UPF.Kind == scenario.UPFReference {
			continue // a probe, churn or restart needs a UPF
		}
		r.progress("step %d of %d: %s (%s)", i+1, len(r.s.Steps), st.Name, st.Setup())
		if err := r.step(ctx, st); err != nil {
			r.run.AddError(st.Header(), err)
			r.progress("  failed: %v", err)
		}
	}
	return nil
}

// up claims a lab for the run, builds it, and at the end of the run, unless
// kept, tears it down. A lab that was up already (`upflab topo up`, or a
// kept run's) is used and left up: it is not this run's to remove. A lab
// another run is using is an error.
func (r *runner) up(o topo.Options) (topo.Lab, error) {
	release, err := topo.Claim(o.Name)
	if err != nil {
		return topo.Lab{}, err
	}
	r.teardown = append(r.teardown, release) // the last to run: after the lab is down
	_, err = topo.Show(o.Name)
	wasUp := err == nil
	lab, err := topo.Up(o)
	if err != nil {
		return lab, err
	}
	switch {
	case wasUp:
		r.progress("lab %s was up already: used, and left up", o.Name)
	case !r.o.Keep:
		r.teardown = append(r.teardown, func() error { return topo.Down(o.Name) })
	}
	return lab, nil
}

// placement notes which core ran what: every core takes a generator
// worker, and the XDP programs of the UPF and the sink run in the softirq
// of the core whose worker sent the frame (veth passes frames on the
// sending core). A step on one core uses the first.
func (r *runner) placement() {
	for i, c := range newMeasurer(r.lab, 0).cpus {
		runs := "generator worker, and in its softirq the UPF's XDP and the sink"
		if i == 0 {
			runs += "; alone in the steps on 1 core (the closed loop)"
		}
		r.run.Place(c, runs)
	}
}

// referenceTarget is the reference forwarder in lab's UPF namespace, with
// sessions numbered as the SMF emulator numbers them.
func (r *runner) referenceTarget(lab topo.Lab) target {
	return target{name: "the reference forwarder", m: newMeasurer(lab, 0), sessions: labSessions(r.s.Sessions.Count), path: tgen.Wire}
}

func (r *runner) startUPF(ctx context.Context) error {
	u := r.s.UPF
	p, command, err := startUPF(r.lab, r.s, r.o.UPFD, r.o.Dir)
	if err != nil {
		return err
	}
	r.upf = p
	r.run.UPF.Command = command
	r.progress("UPF %s started (pid %d); establishing %d %s sessions", u.Name, p.pid(), r.s.Sessions.Count, r.s.Sessions.Profile)
	c, err := smf.Dial(smf.Config{Namespace: r.lab.SMF, Profile: r.s.Sessions.Profile})
	if err != nil {
		return err
	}
	r.smf = c
	if err := waitFor(ctx, p, u.Startup, c.Associate); err != nil {
		return fmt.Errorf("associate with the UPF: %w", err)
	}
	phases, err := c.Establish(ctx, r.s.Sessions.Count)
	if err != nil {
		return fmt.Errorf("establish %d sessions: %w", r.s.Sessions.Count, err)
	}
	if len(phases) > 0 {
		r.run.Sessions.PerSecond = phases[0].Rate()
		r.progress("  %d sessions in %v (%.0f/s)", phases[0].Accepted, phases[0].Elapsed.Round(time.Millisecond), phases[0].Rate())
	}
	for _, x := range c.Sessions() {
		r.sessions = append(r.sessions, tgen.Session{UE: x.UE, UplinkTEID: x.UplinkTEID, DownlinkTEID: x.DownlinkTEID, QFI: x.QFI})
	}
	return nil
}

// stopUPF ends the UPF while the SMF still answers its final reports.
func (r *runner) stopUPF() error {
	err := r.upf.stop(10 * time.Second)
	if r.smf != nil {
		err = errors.Join(err, r.smf.Close())
	}
	return err
}

func (r *runner) progress(format string, args ...any) {
	fmt.Fprintf(r.o.Progress, "upflab: "+format+"\n", args...)
}
