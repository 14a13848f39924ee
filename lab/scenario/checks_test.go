package scenario

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkKinds are the step kinds of upflab verify.
var checkKinds = []string{KindPolicing, KindUsage, KindIsolation, KindOverload, KindAbuse, KindRuleLatency, KindHandover, KindBuffering, KindChurnUnderTraffic}

// TestVerifySuites: both suites load as they are, check upfd with every
// kind of check, the restart and the crash among them, and the short one
// sends for little enough that CI runs it in well under 5 minutes.
func TestVerifySuites(t *testing.T) {
	for _, short := range []bool{false, true} {
		file, data := Verify(short)
		s, err := Parse(file, data)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, st := range s.Steps {
			kinds = append(kinds, st.Kind)
		}
		for _, want := range append(slices.Clone(checkKinds), KindCrash) {
			if !slices.Contains(kinds, want) {
				t.Errorf("%s has no %s step: %v", file, want, kinds)
			}
		}
		if s.UPF.Kind != UPFBuiltIn || s.MeasuresReference() {
			t.Errorf("%s checks %s, reference %v; want upfd alone", file, s.UPF.Kind, s.MeasuresReference())
		}
		limit := 3 * time.Minute
		if short {
			limit = time.Minute
		}
		if d := s.Estimate(); d > limit {
			t.Errorf("%s sends for %s; want at most %s", file, d, limit)
		}
	}
}

func TestCheckDefaults(t *testing.T) {
	s := mustParse(t, "steps:\n"+"  - kind: "+strings.Join(checkKinds, "\n  - kind: ")+"\n")
	p := s.Steps[0].Settings.(*Policing)
	if len(p.MBR) != 5 || p.MBR[0].BPS != 64e3 || p.MBR[4].BPS != 1e9 || p.Offered != 2 || p.Tolerance != 2 || !p.Gate {
		t.Errorf("policing defaults %+v; want 64 kbit/s to 1 Gbit/s, offered at 2x, within 2 %%, and the gate", p)
	}
	u := s.Steps[1].Settings.(*Usage)
	if u.Period != time.Second || u.Threshold != 1_000_000 || u.Quota != 1_000_000 || u.TimeQuota != 2*time.Second || u.Within != time.Second {
		t.Errorf("usage defaults %+v", u)
	}
	if i := s.Steps[2].Settings.(*Isolation); !slices.Equal(i.UDPPorts, []int{2152, 8805}) || !slices.Equal(i.TCPPorts, []int{8080, 9090}) {
		t.Errorf("isolation defaults %+v; want GTP-U and PFCP, upfd's REST and metrics", i)
	}
	if a := s.Steps[4].Settings.(*Abuse); a.ErrorIndications.PPS != 1000 || a.Latency != 200*time.Microsecond {
		t.Errorf("abuse defaults %+v; want 1000 Error Indications a second per CPU, p99 up to 200 µs more", a)
	}
	if l := s.Steps[5].Settings.(*RuleLatency); l.Sessions != 100 || l.Interval != 200*time.Microsecond || l.P99 != 50*time.Millisecond ||
		s.Sessions.Count != 1000 {
		t.Errorf("rule latency defaults %+v with %d sessions; want 100 timed, a datagram every 200 µs, p99 up to 50 ms, beside 1000", l, s.Sessions.Count)
	}
	if h := s.Steps[6].Settings.(*Handover); h.Handovers != 10 || h.Before != 300*time.Millisecond || h.After != 300*time.Millisecond {
		t.Errorf("handover defaults %+v; want 10, 300 ms on each path", h)
	}
	if b := s.Steps[7].Settings.(*Buffering); b.Frames != 32 || b.Bound != 64 || b.Overflow != 32 || b.Hold != 500*time.Millisecond {
		t.Errorf("buffering defaults %+v; want 32 frames within a bound of 64, 32 past it, 500 ms", b)
	}
	names := []string{"policing 64kbps, 1Mbps, 10Mbps, 100Mbps, 1Gbps", "usage", "isolation", "overload 5000", "gtp-u abuse", "rule latency", "handover", "buffering",
		"churn 100/s under traffic"}
	for i, st := range s.Steps {
		if st.Name != names[i] || st.ComparedToReference() {
			t.Errorf("steps[%d]: name %q, compared to reference %v; want %q, false", i, st.Name, st.ComparedToReference(), names[i])
		}
	}
}

// TestBadChecks pins down the error each mistake in a check gets.
func TestBadChecks(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"the reference forwarder", "upf: reference\nsteps:\n  - kind: usage\n",
			`scenario.yaml:3: steps[0].kind: a check drives the UPF's rules over PFCP, which the reference forwarder does not speak; check upfd or a command UPF, so change upf (line 1)`},
		{"tolerance without %", "steps:\n  - {kind: policing, tolerance: 2}\n", `scenario.yaml:2: steps[0].tolerance: "2" has no %; write it as a percentage, e.g. 2%`},
		{"offered below the MBR", "steps:\n  - {kind: policing, offered: 1x}\n", `scenario.yaml:2: steps[0].offered: "1x" is not a factor from 1.1 to 100; want e.g. 2x`},
		{"an MBR in packets", "steps:\n  - {kind: policing, mbr: 10kpps}\n", `scenario.yaml:2: steps[0].mbr[0]: "10kpps" is a packet rate; write the bit rate here (e.g. 567.2kbps) and the packets in pps:`},
		{"a period in part seconds", "steps:\n  - {kind: usage, period: 1500ms}\n", `scenario.yaml:2: steps[0].period: "1500ms" is not whole seconds, which PFCP's time IEs carry; want e.g. 1s or 2s`},
		{"a volume without a number", "steps:\n  - {kind: usage, quota: lots}\n", `scenario.yaml:2: steps[0].quota: "lots" is not a volume; want bytes, e.g. 1MB, 500kB or 1500000`},
		{"bursts of a mix", "steps:\n  - {kind: usage, size: imix}\n", `scenario.yaml:2: steps[0].size: the bursts are of one size, to count them to the byte; want e.g. 1400`},
		{"a flood of real traffic", "steps:\n  - {kind: abuse, rate: max}\n", `scenario.yaml:2: steps[0].rate: "max" loses frames whatever the check does; give a steady rate below saturation, e.g. 20kpps`},
		{"a flood in bits", "steps:\n  - {kind: abuse, echo_rate: 1Gbps}\n", `scenario.yaml:2: steps[0].echo_rate: "1Gbps" is a bit rate; give packets, e.g. 20kpps`},
		{"a median above p99", "steps:\n  - {kind: rule_latency, p50: 60ms}\n", `scenario.yaml:2: steps[0].p50: 60ms is above p99's 50ms; the median cannot be`},
		{"datagrams too far apart", "steps:\n  - {kind: rule_latency, interval: 5ms}\n", `scenario.yaml:2: steps[0].interval: 5ms is not below p50's 5ms; the datagrams must come more often than the limit they measure`},
		{"a path too short", "steps:\n  - {kind: handover, interval: 1ms, after: 5ms}\n", `scenario.yaml:2: steps[0].after: 5ms is less than 10 datagrams at interval 1ms; give each path some frames to lose`},
		{"more frames than the bound", "steps:\n  - {kind: buffering, frames: 100}\n", `scenario.yaml:2: steps[0].frames: 100 is more than the bound of 64; the frames within it must all arrive, so send at most that many (overflow sends more)`},
		{"a port out of range", "steps:\n  - {kind: isolation, tcp_ports: [80, 70000]}\n", `scenario.yaml:2: steps[0].tcp_ports[1]: "70000" is out of range; want 1 to 65535`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("scenario.yaml", []byte(tc.text))
			var e *Error
			if err == nil || !errors.As(err, &e) || err.Error() != tc.want {
				t.Errorf("got\n%v\nwant\n%s", err, tc.want)
			}
		})
	}
}

// TestCheckKeysDocumented: verify.yaml sets every key of every check, and
// docs/lab.md has a row for each.
func TestCheckKeysDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/lab.md")
	if err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, shipped(t, "verify.yaml"))
	set := map[string]bool{}
	for path := range s.src.lines {
		set[keyPattern(path)] = true
	}
	for _, kind := range checkKinds {
		for _, f := range newStep(kind).Settings.fields(&decoder{}) {
			key := "steps[]." + f.key
			if !set[key] {
				t.Errorf("verify.yaml does not set %s, a key of %s steps", key, kind)
			}
			if !strings.Contains(string(doc), "| `"+key+"` |") {
				t.Errorf("docs/lab.md has no row for %s", key)
			}
		}
	}
}

// TestVerifySuiteWithUPF: --upf puts another UPF in the suite, in the
// forms of a scenario's upf: key, and keeps the checks.
func TestVerifySuiteWithUPF(t *testing.T) {
	s, err := VerifySuite(false, "command.yaml")
	if err != nil {
		t.Fatal(err)
	}
	own, _ := VerifySuite(false, "")
	if s.UPF.Kind != UPFCommand || !strings.Contains(s.UPF.Command, "bin/upfd --config {config}") || s.UPF.Name != "upfd as a command" {
		t.Errorf("--upf command.yaml: UPF %+v; want command.yaml's", s.UPF)
	}
	if len(s.Steps) != len(own.Steps) || own.UPF.Kind != UPFBuiltIn {
		t.Errorf("--upf command.yaml: %d steps, the suite's own %d of %s", len(s.Steps), len(own.Steps), own.UPF.Kind)
	}
	dir := t.TempDir()
	bare := dir + "/upf.yaml"
	if err := os.WriteFile(bare, []byte("kind: command\ncommand: eupf --config {config}\nconfig: \"x: 1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := VerifySuite(true, bare); err != nil || s.UPF.Command != "eupf --config {config}" {
		t.Errorf("--upf with the upf: mapping alone: %v, %+v", err, s)
	}
}
