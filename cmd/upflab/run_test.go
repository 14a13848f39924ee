package main

import (
	"errors"
	"testing"

	"github.com/sluice-upf/sluice/lab/report"
)

// A run whose steps failed ends in an error that names them, so that
// upflab exits non-zero and says so on its last line.
func TestFailedStepsEndTheRunInError(t *testing.T) {
	ok := report.Step{Header: report.Header{Name: "ping 64 B", Kind: "ping"}}
	bad := func(name string) report.Step {
		return report.Step{Header: report.Header{Name: name, Kind: "throughput"}, Error: "tgen: no sessions"}
	}
	for _, tc := range []struct {
		name  string
		steps []report.Step
		of    int
		want  string
	}{
		{"every step measured", []report.Step{ok}, 1, ""},
		{"one of two failed", []report.Step{bad("throughput up"), ok}, 2, "1 of 2 steps failed (throughput up); the lines above and the results say why"},
		{"every step failed", []report.Step{bad("a"), bad("b")}, 2, "2 of 2 steps failed (a, b); the lines above and the results say why"},
		{"a step not reached counts in the total", []report.Step{bad("a")}, 3, "1 of 3 steps failed (a); the lines above and the results say why"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := failedSteps(&report.Run{Steps: tc.steps}, tc.of)
			if got := errText(err); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if err != nil && errors.Is(err, errUsage) {
				t.Error("a failed step is no usage error (exit status 1, not 2)")
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
