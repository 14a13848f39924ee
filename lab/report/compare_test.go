package report

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// otherRun is fixedRun measured on another UPF: slower, without the churn
// step, with a step of its own.
func otherRun() *Run {
	run := fixedRun()
	run.UPF = UPF{Name: "eUPF", Version: "v0.6.4", Command: "eupf --config /tmp/upflab/eupf.yaml"}
	run.Started = run.Started.AddDate(0, 0, 1)
	run.Host.Name = "lab2"
	for i := range run.Steps {
		s := &run.Steps[i]
		for j := range s.Throughput {
			m := &s.Throughput[j]
			m.RxKpps *= 0.8
			m.RxGbps *= 0.8
			*m.RatioToReference *= 0.8
			if sp := m.RatioSpread; sp != nil {
				sp.Low, sp.High = 0.8*sp.Low, 0.8*sp.High
			}
		}
		for j := range s.Ping {
			s.Ping[j].AvgMs *= 1.5
		}
		for j := range s.Subscribers {
			s.Subscribers[j].Downlink.RxKpps *= 0.9
			s.Subscribers[j].Downlink.RxGbps *= 0.9
		}
	}
	// Its 1-core step ran while another process held BPF's run-time
	// statistics on.
	run.Steps[1].Throughput[0].BPFStats = true
	ndr := stepOfKind(run, "ndr")
	ndr.NDR[0].Result.RxKpps, ndr.NDR[0].Result.RxGbps = 900, 10.38
	*ndr.NDR[0].RatioToReference, ndr.NDR[0].RatioSpread = 0.5, &Spread{Low: 0.49, High: 0.51}
	// Its first step ran without the reference forwarder: only its rates
	// compare, on one host.
	for j := range run.Steps[0].Throughput {
		m := &run.Steps[0].Throughput[j]
		m.Reference, m.RatioToReference, m.RatioSpread = nil, nil, nil
	}
	*stepOfKind(run, "churn") = Step{Header: Header{Name: "cbr 1400 B 100kpps", Kind: "cbr", Setup: "1400 B, 100kpps, 2s each"},
		CBR: []CBR{{Size: 1400, OfferedKpps: 100, Sent: 200_000, Received: 200_000, PPS: 100_000, Mbps: 1120}}}
	return run
}

// stepOfKind is run's first step of kind.
func stepOfKind(run *Run, kind string) *Step {
	for i := range run.Steps {
		if run.Steps[i].Kind == kind {
			return &run.Steps[i]
		}
	}
	panic("no " + kind + " step")
}

func TestCompare(t *testing.T) {
	var b bytes.Buffer
	err := Compare(&b, []Compared{{Label: "a.json", Run: fixedRun()}, {Label: "b.json", Run: otherRun()}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.md", b.Bytes())
}

// A step with no figures in the first run, missing from the other, still
// has its table.
func TestCompareUnansweredPingsAgainstNoPings(t *testing.T) {
	first, other := fixedRun(), otherRun()
	var pingStep int
	for i, s := range first.Steps {
		if len(s.Ping) > 0 {
			pingStep = i
		}
	}
	for i := range first.Steps[pingStep].Ping {
		p := &first.Steps[pingStep].Ping[i]
		*p = NewPing(p.Target, p.Size, p.Transmitted, nil, time.Second)
	}
	other.Steps = slices.Delete(other.Steps, pingStep, pingStep+1)
	var b bytes.Buffer
	if err := Compare(&b, []Compared{{Label: "a.json", Run: first}, {Label: "b.json", Run: other}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| A | upfd v0.4.0<br>2026-11-22 | none |", "| B | eUPF v0.6.4<br>2026-11-23 | no such step |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// TestCompareFiles compares runs as written to and read from JSON.
func TestCompareFiles(t *testing.T) {
	dir := t.TempDir()
	var runs []Compared
	for name, run := range map[string]*Run{"a": fixedRun(), "b": otherRun()} {
		sub := filepath.Join(dir, name)
		if _, err := Write(run, sub, []string{"json"}); err != nil {
			t.Fatal(err)
		}
		read, err := ReadJSON(filepath.Join(sub, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, Compared{Label: name + ".json", Run: read})
	}
	if runs[0].Label != "a.json" {
		runs[0], runs[1] = runs[1], runs[0]
	}
	var fromFiles, direct bytes.Buffer
	if err := Compare(&fromFiles, runs); err != nil {
		t.Fatal(err)
	}
	Compare(&direct, []Compared{{Label: "a.json", Run: fixedRun()}, {Label: "b.json", Run: otherRun()}})
	if fromFiles.String() != direct.String() {
		t.Errorf("comparing the JSON files differs from comparing the runs:\n%s", fromFiles.String())
	}
}
