package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/runner"
	"github.com/sluice-upf/sluice/lab/scenario"
)

func init() {
	register("run", "[SCENARIO.yaml]: run a scenario (the default against upfd without one) and print the results", runScenario)
}

func runScenario(args []string) error {
	fs := flags("run", "[flags] [SCENARIO.yaml]\n\nRuns the scenario in SCENARIO.yaml, or without one the default scenario (--show-default\nprints it) against upfd.")
	upfd := fs.String("upfd", "", "the upfd binary (default: upfd beside upflab, else on PATH)")
	out := fs.String("out", "", "results directory (default: the scenario's outputs.directory)")
	keep := fs.Bool("keep", false, "leave the lab's namespaces up afterwards")
	showDefault := fs.Bool("show-default", false, "print the default scenario and exit")
	lab := fs.String("lab", "", "the lab's namespaces are `NAME`-smf, -gnb, -upf, -dn (default: the scenario's topology.name): another name runs beside a lab of that one")
	files, err := parseWithFiles(fs, args)
	if err != nil {
		return err
	}
	if *showDefault {
		_, err := os.Stdout.Write(scenario.DefaultYAML())
		return err
	}
	s, err := loadScenario(files)
	if err != nil {
		return err
	}
	if *lab != "" {
		if err := s.SetLab(*lab); err != nil {
			return err
		}
	}
	run, err := execute(s, *upfd, *out, *keep, report.WriteText)
	if run == nil {
		return err
	}
	return errors.Join(err, failedSteps(run, len(s.Steps)))
}

// execute runs s against its UPF (upfd: the binary given, or found), with
// results in out (default: the scenario's outputs.directory), and prints
// them with write: what upflab run (tables for a terminal) and upflab
// verify (the scorecard in Markdown) share.
func execute(s *scenario.Scenario, upfd, out string, keep bool, write func(io.Writer, *report.Run) error) (*report.Run, error) {
	var err error
	o := runner.Options{Keep: keep, Progress: os.Stderr, Dir: out}
	if s.UPF.Kind == scenario.UPFBuiltIn {
		if o.UPFD, err = findUPFD(upfd); err != nil {
			return nil, err
		}
		o.Version = version(o.UPFD)
	}
	start := time.Now()
	if o.Dir == "" {
		o.Dir = s.Outputs.Dir(s.Name, start)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(os.Stderr, "upflab: scenario %s, about %v of traffic; results in %s (Ctrl-C stops and tears down)\n",
		s.Name, s.Estimate().Round(time.Second), o.Dir)
	run, runErr := runner.Run(ctx, s, o)
	written, err := report.Write(run, o.Dir, s.Outputs.Formats)
	if err != nil {
		return run, errors.Join(runErr, err)
	}
	if err := write(os.Stdout, run); err != nil {
		return run, errors.Join(runErr, err)
	}
	fmt.Fprintf(os.Stderr, "upflab: %d files in %s (run.md: every table, the trials, the plots), run took %v\n",
		len(written), o.Dir, time.Since(start).Round(time.Second))
	return run, runErr
}

// failedSteps names the steps of run that failed, nil if none did: the
// run goes on after a failed step, but must not end as if it measured.
func failedSteps(run *report.Run, steps int) error {
	var failed []string
	for _, st := range run.Steps {
		if st.Error != "" {
			failed = append(failed, st.Name)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d steps failed (%s); the lines above and the results say why",
		len(failed), steps, strings.Join(failed, ", "))
}

func loadScenario(args []string) (*scenario.Scenario, error) {
	switch len(args) {
	case 0:
		return scenario.Default(), nil
	case 1:
		return scenario.Load(args[0])
	}
	return nil, fmt.Errorf("%w: one scenario file at the most; upflab run [SCENARIO.yaml]", errUsage)
}

// findUPFD is the upfd binary to run: given, beside upflab, or on PATH.
func findUPFD(given string) (string, error) {
	if given != "" {
		if _, err := os.Stat(given); err != nil {
			return "", fmt.Errorf("--upfd %s: %w", given, err)
		}
		return filepath.Abs(given)
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "upfd")
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	if p, err := exec.LookPath("upfd"); err == nil {
		return filepath.Abs(p)
	}
	return "", errors.New("no upfd binary: build it beside upflab (go build -o bin/ ./cmd/...), or give --upfd PATH")
}

// version asks upfd for its version; "" when it does not say.
func version(upfd string) string {
	out, err := exec.Command(upfd, "version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "upfd ")
}
