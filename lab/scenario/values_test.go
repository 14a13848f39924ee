package scenario

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/config"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Rate
		str  string
	}{
		{"max", Rate{Max: true}, "max"},
		{"MAX", Rate{Max: true}, "max"},
		{"flood", Rate{Max: true}, "max"},
		{"1Mpps", Rate{PPS: 1e6}, "1Mpps"},
		{"500kpps", Rate{PPS: 5e5}, "500kpps"},
		{"150.07 Kpps", Rate{PPS: 150_070}, "150.07kpps"},
		{"900pps", Rate{PPS: 900}, "900pps"},
		{"2Gbps", Rate{BPS: 2e9}, "2Gbps"},
		{"1522.2kbps", Rate{BPS: 1_522_200}, "1.5222Mbps"},
		{"100Mbit/s", Rate{BPS: 1e8}, "100Mbps"},
	} {
		got, err := parseRateAs("max")(tc.text)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("%q: got %+v (%s), %v; want %+v (%s)", tc.text, got, got, err, tc.want, tc.str)
		}
	}
	for _, bad := range []string{"", "fast", "5", "1e3pps", "-1kpps", "1 Mbyte/s", "NaNpps", "1e999pps"} {
		if got, err := parseRateAs("max")(bad); err == nil {
			t.Errorf("%q: took it as %+v", bad, got)
		}
	}
}

func TestPacketsPerSecond(t *testing.T) {
	for _, tc := range []struct {
		rate  Rate
		frame float64
		want  float64
	}{
		{Rate{Max: true}, 1486, 0},
		{Rate{PPS: 150_000}, 1486, 150_000},
		// TRex's 1.79 Gbps of 1486-byte uplink frames is its 150.07 Kpps.
		{Rate{BPS: 1.79e9}, 1491, 150_067.07},
	} {
		if got := tc.rate.PacketsPerSecond(tc.frame); int(got) != int(tc.want) {
			t.Errorf("%s of %v-byte frames = %v pps; want %v", tc.rate, tc.frame, got, tc.want)
		}
	}
}

func TestSize(t *testing.T) {
	imix, err := parseSize("imix")
	if err != nil || !imix.IMIX || imix.String() != "imix" {
		t.Fatalf("imix: %+v, %v", imix, err)
	}
	if mean := imix.MeanBytes(); mean != (7*64+4*576+1400)/12.0 {
		t.Errorf("IMIX averages %v bytes; want 7:4:1 of 64, 576 and 1400", mean)
	}
	for _, w := range IMIX {
		if w.Bytes < MinPayload || w.Bytes > MaxPayload {
			t.Errorf("IMIX size %d is outside %d-%d", w.Bytes, MinPayload, MaxPayload)
		}
	}
	if one := (Size{Bytes: 64}); one.MeanBytes() != 64 || !slices.Equal(one.Mix(), []Weighted{{64, 1}}) {
		t.Errorf("a size of 64 mixes as %v", one.Mix())
	}
}

func TestDurations(t *testing.T) {
	for text, want := range map[string]time.Duration{"0": 0, "0s": 0, "10ms": 10 * time.Millisecond, "1s": time.Second} {
		if got, err := parseInterval(text); err != nil || got != want {
			t.Errorf("interval %q = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, bad := range []string{"-1s", "10", "soon"} {
		if _, err := parseInterval(bad); err == nil {
			t.Errorf("interval %q taken", bad)
		}
	}
}

func TestOutputsDir(t *testing.T) {
	o := Outputs{Directory: "upflab-results/{name}-{time}"}
	at := time.Date(2026, 11, 22, 10, 4, 5, 0, time.Local)
	if got := o.Dir("default", at); got != "upflab-results/default-20261122-100405" {
		t.Errorf("Dir = %q", got)
	}
}

// TestOneValueKit checks that a scenario and the upfd.yaml inside it read
// numbers, durations and booleans by the same rules: the same values are
// taken, and the same values refused with the same words.
func TestOneValueKit(t *testing.T) {
	const steps = "steps:\n  - kind: ping\n"
	s := mustParse(t, "sessions: {count: 100_000}\nupf:\n  config: {max_sessions: 100_000}\n"+steps)
	c, err := config.Parse("", s.UPF.Config)
	if err != nil || s.Sessions.Count != 100_000 || c.MaxSessions != 100_000 {
		t.Fatalf("100_000: scenario read %d, upfd.yaml %d, %v", s.Sessions.Count, c.MaxSessions, err)
	}
	for _, tc := range []struct{ scenarioKey, configKey, value, want string }{
		{"sessions: {count: %s}", "max_sessions: %s", "_100", `"_100" is not a whole number; want 1 to `},
		{"sessions: {count: %s}", "max_sessions: %s", "1__000", `"1__000" is not a whole number; want 1 to `},
		{"sessions: {count: %s}", "max_sessions: %s", "1e5", `"1e5" is not a whole number; want 1 to `},
		{"upf: {startup: %s}", "pfcp: {t1: %s}", "5", `"5" has no unit; write it with one, e.g. 5s or 5ms`},
		{"upf: {startup: %s}", "pfcp: {t1: %s}", "1d", `"1d" is not a duration; write a number and a unit (ns, us, ms, s, m or h), e.g. `},
		{"reference: %s", "state_fsync: %s", "yes", `"yes" is not true or false`},
	} {
		_, scenarioErr := Parse("scenario.yaml", []byte(fmt.Sprintf(tc.scenarioKey, tc.value)+"\n"+steps))
		_, configErr := config.Parse("upfd.yaml", []byte(fmt.Sprintf(tc.configKey, tc.value)+"\n"))
		for _, err := range []error{scenarioErr, configErr} {
			if err == nil || !strings.Contains(err.Error(), ": "+tc.want) {
				t.Errorf("%s: got %v; want ...%s...", tc.value, err, tc.want)
			}
		}
	}
}
