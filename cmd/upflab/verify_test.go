package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-upf/sluice/lab/report"
)

// A failed check ends upflab verify in an error (exit status 1) that says
// how many; refused checks do not.
func TestFailedChecksEndVerifyInError(t *testing.T) {
	step := func(verdicts ...report.Verdict) report.Step {
		s := report.Step{Header: report.Header{Name: "policing", Kind: "policing"}}
		for _, v := range verdicts {
			s.Checks = append(s.Checks, report.Check{Name: string(v), Verdict: v})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		step report.Step
		want string
	}{
		{"every check passed", step(report.Pass, report.Pass), ""},
		{"a refusal is no failure", step(report.Pass, report.Refused), ""},
		{"one failed", step(report.Pass, report.Fail, report.Refused), "1 of 3 checks failed; the scorecard says which and why"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := failedChecks(&report.Run{Steps: []report.Step{tc.step}})
			if got := errText(err); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if err != nil && errors.Is(err, errUsage) {
				t.Error("a failed check is no usage error")
			}
		})
	}
}

// Bad input to upflab verify is refused before any lab is built, with
// what to give instead.
func TestVerifyRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	noUPF := filepath.Join(dir, "list.yaml")
	if err := os.WriteFile(noUPF, []byte("- upfd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badKind := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badKind, []byte("upf:\n  kind: eupf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"suite.yaml"}, "takes no file"},
		{[]string{"--upf", filepath.Join(dir, "none.yaml")}, "want upfd, reference, or a YAML file with a upf: key"},
		{[]string{"--upf", noUPF}, "want a mapping with a upf: key"},
		{[]string{"--upf", badKind}, `"eupf" is not a UPF kind`},
		{[]string{"--upf", "reference"}, "the reference forwarder does not speak"},
		{[]string{"--lab", "bad name!"}, "--lab: "},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := runVerify(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
