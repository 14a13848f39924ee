package report

import (
	"bytes"
	"path/filepath"
	"testing"
)

// otherRun is fixedRun measured on another UPF: slower, without the churn
// step, with a step of its own.
func otherRun() *Run {
	run := fixedRun()
	run.UPF = UPF{Name: "eUPF", Version: "v0.6.4", Command: "eupf --config /tmp/upflab/eupf.yaml"}
	run.Started = run.Started.AddDate(0, 0, 1)
	for i := range run.Steps {
		s := &run.Steps[i]
		for j := range s.Throughput {
			s.Throughput[j].RxKpps *= 0.8
			s.Throughput[j].RxGbps *= 0.8
		}
		for j := range s.Ping {
			s.Ping[j].AvgMs *= 1.5
		}
		for j := range s.Subscribers {
			s.Subscribers[j].Downlink.RxKpps *= 0.9
			s.Subscribers[j].Downlink.RxGbps *= 0.9
		}
	}
	run.Steps[1].NDR[0].Result.RxKpps, run.Steps[1].NDR[0].Result.RxGbps = 900, 10.38
	run.Steps[5] = Step{Header: Header{Name: "cbr 1400 B 100kpps", Kind: "cbr", Setup: "1400 B, 100kpps, 2s each"},
		CBR: []CBR{{Size: 1400, OfferedKpps: 100, Sent: 200_000, Received: 200_000, PPS: 100_000, Mbps: 1120}}}
	return run
}

func TestCompare(t *testing.T) {
	var b bytes.Buffer
	err := Compare(&b, []Compared{{Label: "a.json", Run: fixedRun()}, {Label: "b.json", Run: otherRun()}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.md", b.Bytes())
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
