package report

import (
	"bytes"
	"encoding/csv"
	"reflect"
	"strings"
	"testing"
	"time"
)

// restartRun is a run with one restart step: no loss up, some down; the
// same Recovery Time Stamp; every session but one known afterwards.
func restartRun() *Run {
	run := &Run{Format: FormatVersion, Scenario: "restart", Started: started, Finished: started.Add(14 * time.Second),
		UPF: UPF{Name: "upfd"}, Sessions: Sessions{Count: 1000, Profile: "plain", Flows: 1}}
	recovery := started.Add(-time.Minute)
	up := RestartDirection{Measurement: NewMeasurement("uplink", "1400", 100, 6*time.Second, 600_000, 600_000*1490, 600_000, 600_000*1446),
		SentWhileAway: 38_912}
	up.Latency = &Latency{P50: 20, P99: 80, Max: 1285.4}
	down := RestartDirection{Measurement: NewMeasurement("downlink", "1400", 100, 6*time.Second, 600_000, 600_000*1446, 599_990, 599_990*1490),
		Lost: 10, Duplicates: 2, Reordered: 3, SentWhileAway: 38_900}
	run.AddRestart(Header{Name: "restart 1400 B", Kind: "restart", Setup: "both at once, 1400 B, 100kpps each way for 6s, restart at 2s"},
		Restart{AtSeconds: 2, StopMs: 78.4, RestartMs: 389.1, RecoveryBefore: recovery, RecoveryAfter: recovery,
			Sessions: 1000, SessionsAccepted: 999, Directions: []RestartDirection{up, down}})
	return run
}

func TestRestartInMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, restartRun()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Restart under traffic\n",
		"| 1 | restart 1400 B<br>both at once, 1400 B, 100kpps each way for 6s, restart at 2s | uplink | 100.00 | 600000 | 38912 | 600000 | 0 | 0.00 | 0 | 0 | 1285.4 |\n",
		"| downlink | 100.00 | 600000 | 38900 | 599990 | 10 | <0.01 | 2 | 3 | – |\n",
		"| 1 | restart 1400 B | SIGTERM | 2.00 | 78.4 | 389.1 | unchanged | 999/1000 |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("run.md has no %q:\n%s", want, b.String())
		}
	}
}

func TestRestartInCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, restartRun()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows; want a header and one per direction", len(rows))
	}
	want := map[string]string{"kind": "restart", "direction": "downlink", "tx_packets": "600000", "rx_packets": "599990",
		"lost_packets": "10", "duplicates": "2", "reordered": "3", "sent_while_away": "38900", "signal": "SIGTERM", "stop_ms": "78.4",
		"restart_ms": "389.1", "recovery_unchanged": "true", "failed": "1"}
	for col, v := range want {
		i := indexOf(rows[0], col)
		if i < 0 || rows[2][i] != v {
			t.Errorf("column %s: %q; want %q", col, at(rows[2], i), v)
		}
	}
}

func TestRestartReadsBackAndCompares(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(restartRun(), dir, []string{"json"}); err != nil {
		t.Fatal(err)
	}
	read, err := ReadJSON(dir + "/run.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := read.Steps[0].Restart, restartRun().Steps[0].Restart; !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v; want %+v", got, want)
	}
	var b bytes.Buffer
	if err := Compare(&b, []Compared{{Label: "a.json", Run: restartRun()}, {Label: "b.json", Run: read}}); err != nil {
		t.Fatal(err)
	}
	if want := "| B | upfd<br>2026-11-22 | 0 (0.00 %) | 10 (<0.01 %) | 389.1 | 1.00 | unchanged | 999/1000 |\n"; !strings.Contains(b.String(), want) {
		t.Errorf("compare has no %q:\n%s", want, b.String())
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func at(list []string, i int) string {
	if i < 0 || i >= len(list) {
		return "(none)"
	}
	return list[i]
}
