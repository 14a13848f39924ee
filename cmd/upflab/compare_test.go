package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
)

// writeRun writes a run of upf, with one throughput step beside the
// reference forwarder's, as run.json in a directory of its own.
func writeRun(t *testing.T, dir, upf string, rxPackets, refPackets uint64) string {
	t.Helper()
	run := &report.Run{Format: report.FormatVersion, Scenario: "default", Started: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		UPF: report.UPF{Name: upf}}
	m := report.NewMeasurement("uplink", "1400", 0, time.Second, 1_250_000, 1_857_500_000, rxPackets, rxPackets*1442)
	ref := report.NewMeasurement("uplink", "1400", 0, time.Second, 1_250_000, 1_857_500_000, refPackets, refPackets*1486)
	m.Reference = &ref
	run.AddThroughput(report.Header{Name: "throughput uplink 1400 B max", Kind: "throughput", Setup: "uplink, 1400 B, max, 1s each"}, m)
	sub := filepath.Join(dir, upf)
	if _, err := report.Write(run, sub, []string{"json"}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(sub, "run.json")
}

func TestCompareFiles(t *testing.T) {
	dir := t.TempDir()
	// B received fewer packets than A, on a machine whose path carried
	// fewer: it compares by its ratio to its reference, 0.81 against 0.80.
	a, b := writeRun(t, dir, "upfd", 1_000_000, 1_250_000), writeRun(t, dir, "eUPF", 814_750, 1_000_000)
	out := filepath.Join(dir, "compare.md")
	if err := runCompare([]string{"-o", out, a, b}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| A | " + a + " | upfd<br>2026-11-22 | – | default |",
		"| B | eUPF<br>2026-11-22 | 814.75 | 34.82 | 0.81 | 1.02 | – | – | – | – |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare.md lacks %q:\n%s", want, md)
		}
	}
}

func TestCompareUsage(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, "upfd", 1, 1)
	notRun := filepath.Join(dir, "trex.json")
	os.WriteFile(notRun, []byte(`{"format": "trex"}`), 0o644)
	for _, tc := range []struct {
		args  []string
		usage bool
	}{
		{nil, true}, {[]string{a}, true}, {[]string{"--html", a, a}, true},
		{[]string{a, filepath.Join(dir, "none.json")}, false}, {[]string{a, notRun}, false},
	} {
		err := runCompare(tc.args)
		if err == nil || errors.Is(err, errUsage) != tc.usage {
			t.Errorf("compare %q: %v; want an error, a usage error: %v", tc.args, err, tc.usage)
		}
	}
}
