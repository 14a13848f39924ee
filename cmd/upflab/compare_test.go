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

// writeRun writes a run of upf, with one throughput step, as run.json in
// a directory of its own.
func writeRun(t *testing.T, dir, upf string, rxPackets uint64) string {
	t.Helper()
	run := &report.Run{Format: report.FormatVersion, Scenario: "default", Started: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		UPF: report.UPF{Name: upf}}
	m := report.NewMeasurement("uplink", "1400", 0, time.Second, 1_000_000, 1_486_000_000, rxPackets, rxPackets*1442)
	run.AddThroughput(report.Header{Name: "throughput uplink 1400 B max", Kind: "throughput", Setup: "uplink, 1400 B, max, 1s each"}, m)
	sub := filepath.Join(dir, upf)
	if _, err := report.Write(run, sub, []string{"json"}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(sub, "run.json")
}

func TestCompareFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := writeRun(t, dir, "upfd", 1_000_000), writeRun(t, dir, "eUPF", 814_750)
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
		"| B | eUPF<br>2026-11-22 | Tx:11.89<br>Rx:9.40 | Tx:1000.00<br>Rx:814.75 | 18.52 | – | 0.81 |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare.md lacks %q:\n%s", want, md)
		}
	}
}

func TestCompareUsage(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, "upfd", 1)
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
