package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
)

func init() {
	register("verify", "check what a UPF does against exact counts: the scorecard of upfd, or of --upf", runVerify)
}

const verifySynopsis = "[--short] [--upf upfd|reference|FILE.yaml] [--out DIR] [--lab NAME]"

// runVerify runs the suite of checks (lab/scenario/verify.yaml) against
// a UPF, prints the scorecard and writes it as the suite's outputs say;
// any failed check makes it exit non-zero.
func runVerify(args []string) error {
	fs := flags("verify", verifySynopsis+"\n\nRuns upflab's checks (--show-suite prints them) against upfd, or against the UPF that --upf\n"+
		"gives in the forms of a scenario's upf: key: upfd, reference, or a YAML file that holds a upf: key\n"+
		"(a scenario of that UPF, e.g. lab/scenario/command.yaml). Prints the scorecard; exits 1 if a check fails.")
	upf := fs.String("upf", "", "the UPF under test: upfd, reference, or a YAML file with a upf: key (default: upfd)")
	short := fs.Bool("short", false, "the short suite, as CI runs it (verify-short.yaml)")
	upfd := fs.String("upfd", "", "the upfd binary (default: upfd beside upflab, else on PATH)")
	out := fs.String("out", "", "results directory (default: upflab-results/verify-TIME)")
	keep := fs.Bool("keep", false, "leave the lab's namespaces up afterwards")
	lab := fs.String("lab", "", "the lab's namespaces are `NAME`-smf, -gnb, -upf, -dn (default: the suite's, upflab): another name runs beside a lab of that one")
	showSuite := fs.Bool("show-suite", false, "print the suite's checks and exit")
	files, err := parseWithFiles(fs, args)
	if err != nil {
		return err
	}
	if len(files) > 0 {
		return fmt.Errorf("%w: upflab verify %s: takes no file; give the UPF with --upf, or run a suite of your own with upflab run", errUsage, verifySynopsis)
	}
	if *showSuite {
		_, data := scenario.Verify(*short)
		_, err := os.Stdout.Write(data)
		return err
	}
	s, err := scenario.VerifySuite(*short, *upf)
	if err != nil {
		return err
	}
	if *lab != "" {
		if err := s.SetLab(*lab); err != nil {
			return err
		}
	}
	run, err := execute(s, *upfd, *out, *keep, report.WriteMarkdown)
	if run == nil {
		return err
	}
	return errors.Join(err, failedSteps(run, len(s.Steps)), failedChecks(run))
}

// failedChecks says how many checks failed, nil if none did.
func failedChecks(run *report.Run) error {
	n := run.Verdicts()
	if n[report.Fail] == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d checks failed; the scorecard says which and why", n[report.Fail], n[report.Pass]+n[report.Fail]+n[report.Refused])
}
