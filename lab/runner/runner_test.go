package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
)

// A short scenario, below saturation: every frame sent must arrive, through
// the reference forwarder and through upfd.
const short = `
name: short
topology: {name: %s}
upf: {kind: %s}
%s
sessions: {count: 100}
steps:
  - {kind: throughput, direction: both, size: 64, rate: 20kpps, duration: 1s}
  - {kind: throughput, direction: uplink, size: imix, rate: 10kpps, duration: 1s}
%s
outputs: {directory: %s, formats: [json, md]}
`

func runShort(t *testing.T, kind, extra string) *report.Run {
	testenv.RequirePrivileges(t)
	dir := t.TempDir()
	lab := fmt.Sprintf("sluicert%d", os.Getpid()%100000)
	ref := "reference: true"
	if kind == scenario.UPFReference {
		ref = ""
	}
	s, err := scenario.Parse("short.yaml", []byte(fmt.Sprintf(short, lab, kind, ref, extra, dir)))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Dir: dir, Progress: testWriter{t}}
	if kind == scenario.UPFBuiltIn {
		o.UPFD = buildUPFD(t, dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := Run(ctx, s, o)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// buildUPFD builds upfd into dir and gives its path.
func buildUPFD(t *testing.T, dir string) string {
	t.Helper()
	upfd := filepath.Join(dir, "upfd")
	if out, err := exec.Command("go", "build", "-o", upfd, "../../cmd/upfd").CombinedOutput(); err != nil {
		t.Fatalf("build upfd: %v\n%s", err, out)
	}
	return upfd
}

func TestPrivilegedShortScenarioThroughUPFD(t *testing.T) {
	run := runShort(t, scenario.UPFBuiltIn, "  - {kind: ping, sizes: [64], count: 5, interval: 10ms}")
	checkExact(t, run)
	p := stepOf(t, run, "ping", "").Ping
	if len(p) != 1 || p[0].Received != 5 || p[0].MinMs <= 0 || p[0].MaxMs > 1000 {
		t.Errorf("ping: %+v, want 5 of 5 answered with sane round trips", p)
	}
}

func TestPrivilegedShortScenarioThroughTheReference(t *testing.T) {
	checkExact(t, runShort(t, scenario.UPFReference, ""))
}

// On one core, flat out, in rounds: each round counted, beside the
// reference forwarder's round in the twin lab; an NDR search confirms the
// rate it found, through both.
func TestPrivilegedClosedLoopInRounds(t *testing.T) {
	run := runShort(t, scenario.UPFBuiltIn,
		"  - {kind: throughput, name: loop, direction: both, size: 64, duration: 400ms, cores: 1, rounds: 4}\n"+
			"  - {kind: ndr, direction: uplink, size: 64, trial: 200ms, max_iterations: 4, cores: 1, confirm: 2}")
	checkExact(t, run)
	for _, m := range stepOf(t, run, "throughput", "loop").Throughput {
		ref := m.Reference
		if ref == nil || len(m.Rounds) != 4 || len(ref.Rounds) != 4 || m.CoreSeconds <= 0 || ref.CoreSeconds <= 0 ||
			m.RatioToReference == nil || m.RatioSpread == nil {
			t.Errorf("%s: %d rounds, core seconds %v, reference %v, ratio %v, spread %v; want 4 rounds on a core, beside 4 of the reference's, a ratio and its spread",
				m.Direction, len(m.Rounds), m.CoreSeconds, ref != nil, m.RatioToReference, m.RatioSpread)
		}
	}
	for _, s := range stepOf(t, run, "ndr", "").NDR {
		for _, x := range []*report.Search{&s, s.Reference} {
			final := 0
			for _, tr := range x.Trials {
				if tr.Final {
					final++
				}
			}
			if !x.Found || final != 3 {
				t.Errorf("%s search: found %v with %d trials at its rate; want a rate that passed and held twice", s.Direction, x.Found, final)
			}
		}
	}
}

// checkExact: every throughput measurement, and its reference, counted
// what was sent and lost nothing but what the lab's veths refused, which
// a starved host makes them do (report.Measurement.Refused).
func checkExact(t *testing.T, run *report.Run) {
	t.Helper()
	n := 0
	for _, st := range run.Steps {
		if st.Error != "" {
			t.Errorf("step %s failed: %s", st.Name, st.Error)
		}
		for _, m := range st.Throughput {
			for _, x := range []*report.Measurement{&m, m.Reference} {
				if x == nil {
					continue
				}
				n++
				if x.TxPackets == 0 || x.RxPackets+x.Refused != x.TxPackets {
					t.Errorf("%s %s %s: sent %d, received %d, the lab's veths refused %d: want all the rest", st.Name, x.Direction, x.Size, x.TxPackets, x.RxPackets, x.Refused)
				}
				if x.Refused > 0 {
					t.Logf("%s %s %s: the lab's veths refused %d of %d frames", st.Name, x.Direction, x.Size, x.Refused, x.TxPackets)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no throughput measured")
	}
}

// runUPFD runs a scenario against upfd built from ./cmd/upfd: text, whose
// first %s is the lab's name and second the output directory, within limit.
func runUPFD(t *testing.T, name, lab, text string, limit time.Duration) *report.Run {
	t.Helper()
	testenv.RequirePrivileges(t)
	dir := t.TempDir()
	s, err := scenario.Parse(name, fmt.Appendf(nil, text, lab, dir))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Dir: dir, Progress: testWriter{t}, UPFD: filepath.Join(dir, "upfd")}
	if out, err := exec.Command("go", "build", "-o", o.UPFD, "../../cmd/upfd").CombinedOutput(); err != nil {
		t.Fatalf("build upfd: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	run, err := Run(ctx, s, o)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// stepOf is the run's first step of kind, and of name unless it is "".
func stepOf(t *testing.T, run *report.Run, kind, name string) report.Step {
	t.Helper()
	for _, st := range run.Steps {
		if st.Kind == kind && (name == "" || st.Name == name) {
			return st
		}
	}
	t.Fatalf("no %s step %q in the run", kind, name)
	return report.Step{}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	return len(b), nil
}
