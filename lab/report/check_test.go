package report

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func TestVerdicts(t *testing.T) {
	for _, c := range []struct {
		name  string
		check Check
		want  Verdict
		limit string
	}{
		{"within both bounds", Between("rate", 100.4, 98, 102, "% of MBR"), Pass, "98 to 102 % of MBR"},
		{"on a bound", Between("rate", 102, 98, 102, "% of MBR"), Pass, "98 to 102 % of MBR"},
		{"below the lower bound", Between("rate", 97.99, 98, 102, "% of MBR"), Fail, "98 to 102 % of MBR"},
		{"none where none may be", AtMost("overshoot", 0, 0, "bytes"), Pass, "≤ 0 bytes"},
		{"one where none may be", AtMost("overshoot", 1, 0, "bytes"), Fail, "≤ 0 bytes"},
		{"enough", AtLeast("sessions", 1000, 1000, ""), Pass, "≥ 1000"},
		{"no figure at all", AtMost("latency", math.NaN(), 10, "ms"), Fail, "≤ 10 ms"},
		{"failed whatever the figure", AtMost("leak", 0, 0, "frames").Failed("the control frames did not arrive"), Fail, "≤ 0 frames"},
		{"refused", RefusedCheck("gate closed", "cause 69 (Rule creation/modification Failure)"), Refused, "–"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.check.Verdict != c.want || c.check.LimitText() != c.limit {
				t.Errorf("%+v: verdict %s, limit %q; want %s, %q", c.check, c.check.Verdict, c.check.LimitText(), c.want, c.limit)
			}
		})
	}
}

func TestFigureText(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1500: "1500", 99.87654: "99.88", 0.0123456: "0.01235", -3.5: "-3.500", 12345.678: "12345.7"} {
		if got := figureText(v); got != want {
			t.Errorf("figureText(%v) = %q; want %q", v, got, want)
		}
	}
}

// scorecardRun is the scorecard of a verify run: checks that pass, fail
// and were refused, a step that failed.
func scorecardRun(upf UPF, day int) *Run {
	run := &Run{
		Format: FormatVersion, Scenario: "verify", Started: started.AddDate(0, 0, day), Finished: started.AddDate(0, 0, day).Add(3 * time.Minute),
		Host:     Host{Name: "lab1", Kernel: "Linux 6.18.0", CPUModel: "Intel(R) Xeon(R) CPU @ 2.20GHz", CPUs: 2},
		UPF:      upf,
		Sessions: Sessions{Count: 100, Profile: "plain", Flows: 1},
	}
	policing := Header{Name: "policing", Kind: "policing", Setup: "MBR 1Mbps, 100Mbps offered at 2x, 3s each, both"}
	run.AddChecks(policing,
		Between("MBR 1 Mbit/s uplink", 100.3, 98, 102, "% of MBR"),
		Between("MBR 1 Mbit/s downlink", 97.1, 98, 102, "% of MBR"),
		AtMost("gate closed uplink", 0, 0, "frames"))
	run.AddChecks(Header{Name: "usage", Kind: "usage", Setup: "periodic 1s, threshold 1MB, final; quota 1MB"},
		AtMost("periodic report uplink", 0, 0, "bytes off"),
		RefusedCheck("volume quota", "cause 69 (Rule creation/modification Failure)"))
	run.AddError(Header{Name: "isolation", Kind: "isolation", Setup: "UE to the UPF's addresses"}, errRun("the gNB's socket: address in use"))
	return run
}

type errRun string

func (e errRun) Error() string { return string(e) }

func TestScorecardWriters(t *testing.T) {
	for file, write := range map[string]func(io.Writer, *Run) error{
		"scorecard.md":  WriteMarkdown,
		"scorecard.csv": WriteCSV,
	} {
		t.Run(file, func(t *testing.T) {
			var b bytes.Buffer
			if err := write(&b, scorecardRun(UPF{Name: "upfd", Version: "v0.4.0"}, 0)); err != nil {
				t.Fatal(err)
			}
			golden(t, file, b.Bytes())
		})
	}
}

// Two UPFs' scorecards side by side: the second passes what the first
// fails, and refuses nothing.
func TestCompareScorecards(t *testing.T) {
	other := scorecardRun(UPF{Name: "eUPF", Version: "v0.6.4"}, 1)
	other.Steps[0].Checks[1] = Between("MBR 1 Mbit/s downlink", 100.9, 98, 102, "% of MBR")
	other.Steps[1].Checks[1] = AtMost("volume quota", 1400, 0, "bytes past it")
	var b bytes.Buffer
	err := Compare(&b, []Compared{{Label: "upfd.json", Run: scorecardRun(UPF{Name: "upfd", Version: "v0.4.0"}, 0)}, {Label: "eupf.json", Run: other}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "compare-scorecard.md", b.Bytes())
}

func TestVerdictsCount(t *testing.T) {
	n := scorecardRun(UPF{Name: "upfd"}, 0).Verdicts()
	if n[Pass] != 3 || n[Fail] != 1 || n[Refused] != 1 {
		t.Errorf("verdicts %v; want 3 pass, 1 fail, 1 refused", n)
	}
}

// A failure the host caused counts as a failure, and the scorecard says
// how many of them were the host's.
func TestHostFailures(t *testing.T) {
	run := &Run{Steps: []Step{{Header: Header{Name: "policing"}, Checks: []Check{
		Between("MBR 1Mbps uplink", 100, 98, 102, "% of MBR"),
		Between("MBR 1Mbps downlink", 63, 98, 102, "% of MBR").HostLimited("the generator's offer fell to the MBR"),
	}}}}
	if n := run.Verdicts(); n[Fail] != 1 || n[Pass] != 1 {
		t.Errorf("verdicts %v; want 1 pass, 1 fail", n)
	}
	var b strings.Builder
	checkKind{}.section(&b, run)
	if !strings.Contains(b.String(), "2 checks: 1 pass, 1 fail, 0 refused. 1 of the failures are the lab host's") {
		t.Errorf("scorecard:\n%s", b.String())
	}
}

// The scorecard for a terminal: aligned, its verdicts plain words.
func TestScorecardForATerminal(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, scorecardRun(UPF{Name: "upfd"}, 1)); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"Scorecard\n", "  1  MBR 1 Mbit/s downlink   97.10 % of MBR  98 to 102 % of MBR     fail", "  5 checks: 3 pass, 1 fail, 1 refused.\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the terminal's scorecard lacks %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, "**") || strings.Contains(text, "|") {
		t.Errorf("the terminal's scorecard has Markdown:\n%s", text)
	}
}
