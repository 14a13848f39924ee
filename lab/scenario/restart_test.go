package scenario

import (
	"errors"
	"os"
	"testing"
	"time"
)

// shipped is the text of a scenario file beside the code, which
// docs/lab.md may show.
func shipped(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRestartScenario pins down what restart.yaml measures: upfd with
// 1000 sessions, restarted under steady traffic both ways.
func TestRestartScenario(t *testing.T) {
	s, err := Parse("restart.yaml", []byte(shipped(t, "restart.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	if s.UPF.Kind != UPFBuiltIn || s.Sessions.Count != 1000 || s.MeasuresReference() || !s.Restarts() {
		t.Errorf("restart.yaml runs %s with %d sessions, reference %v; want upfd, 1000, no reference", s.UPF.Kind, s.Sessions.Count, s.MeasuresReference())
	}
	for _, st := range s.Steps {
		r, ok := st.Settings.(*Restart)
		if !ok || r.Direction != Both || r.Rate.Max || r.At >= r.Duration {
			t.Errorf("%s: %s step %+v; want a restart both ways at a steady rate, within the traffic", st.Name, st.Kind, r)
		}
	}
	if d := s.Estimate(); d != 12*time.Second {
		t.Errorf("Estimate() = %s; want 12s, the two steps' traffic", d)
	}
}

func TestRestartStepDefaults(t *testing.T) {
	s := mustParse(t, "steps:\n  - kind: restart\n  - {kind: restart, direction: uplink, size: 64, rate: 1Gbps, duration: 3s, at: 1s}\n")
	want := Restart{Direction: Both, Size: Size{Bytes: 1400}, Rate: Rate{PPS: 100_000}, Duration: 6 * time.Second, At: 2 * time.Second}
	if got := *s.Steps[0].Settings.(*Restart); got != want {
		t.Errorf("defaults %+v; want %+v", got, want)
	}
	for i, want := range []struct{ name, setup string }{
		{"restart both 1400 B 100kpps", "both at once, 1400 B, 100kpps each way for 6s, restart at 2s"},
		{"restart uplink 64 B 1Gbps", "uplink, 64 B, 1Gbps each way for 3s, restart at 1s"},
	} {
		if st := s.Steps[i]; st.Name != want.name || st.Setup() != want.setup {
			t.Errorf("steps[%d]: name %q, setup %q; want %q, %q", i, st.Name, st.Setup(), want.name, want.setup)
		}
	}
	if st := s.Steps[0]; st.ComparedToReference() || st.Estimate() != 6*time.Second {
		t.Errorf("a restart step: compared to reference %v, estimate %s; want false, 6s (both ways at once)", st.ComparedToReference(), st.Estimate())
	}
}

// TestBadRestartSteps pins down the error each mistake in a restart step
// gets.
func TestBadRestartSteps(t *testing.T) {
	const restart = "steps:\n  - kind: restart\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"flat out", restart + "    rate: max\n", `scenario.yaml:3: steps[0].rate: "max" loses frames with or without a restart; give a steady rate below saturation, e.g. 100kpps`},
		{"flood", restart + "    rate: flood\n", `scenario.yaml:3: steps[0].rate: "flood" loses frames with or without a restart; give a steady rate below saturation, e.g. 100kpps`},
		{"rate without unit", restart + "    rate: 100\n", `scenario.yaml:3: steps[0].rate: "100" has no unit; want e.g. 100kpps or 100Mbps`},
		{"at the end", restart + "    duration: 2s\n    at: 2s\n", `scenario.yaml:4: steps[0].at: 2s is not before the end of the traffic, duration: 2s (line 3); restart within it, e.g. at: 667ms`},
		{"default at after a short duration", restart + "    duration: 1s\n", `scenario.yaml:3: steps[0].duration: 1s ends the traffic before the restart, at 2s (at's default); make it longer, or set at: below it`},
		{"at of zero", restart + "    at: 0s\n", `scenario.yaml:3: steps[0].at: "0s" is not above 0; want a duration such as 2s or 500ms`},
		{"at in another step", "steps:\n  - kind: throughput\n    at: 2s\n", `scenario.yaml:3: steps[0].at: a key of restart steps, not here; a throughput step takes kind, name, direction, size, rate, duration, cores or rounds`},
		{"the reference forwarder", "upf: reference\n" + restart, `scenario.yaml:3: steps[0].kind: the reference forwarder is no process to restart; a restart step measures upfd or a command UPF, so change upf (line 1)`},
		{"the reference forwarder as a kind", "upf:\n  kind: reference\n" + restart, `scenario.yaml:4: steps[0].kind: the reference forwarder is no process to restart; a restart step measures upfd or a command UPF, so change upf.kind (line 2)`},
		{"upfd pinned by the file", "upf:\n  config:\n    pin_path: /sys/fs/bpf/mine\n" + restart, `scenario.yaml:3: upf.config.pin_path: the lab sets it for the restart step, steps[0] (line 5), and removes what it pinned after the run; remove pin_path`},
		{"upfd state file given", "upf:\n  config: {state_file: /tmp/s.json}\n" + restart, `scenario.yaml:2: upf.config.state_file: the lab sets it for the restart step, steps[0] (line 4), and removes what it pinned after the run; remove state_file`},
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

// TestRestartOfOtherUPFs: upfd with other config, and a command UPF, may
// be restarted; a scenario without a restart step is not pinned.
func TestRestartOfOtherUPFs(t *testing.T) {
	for _, text := range []string{
		"upf:\n  config: {max_sessions: 2000}\nsteps: [{kind: restart}]\n",
		"upf: {kind: command, command: eupf}\nsteps: [{kind: restart}]\n",
	} {
		if s := mustParse(t, text); !s.Restarts() {
			t.Errorf("%q: Restarts() = false", text)
		}
	}
	if Default().Restarts() {
		t.Error("the default scenario restarts its UPF")
	}
}

// A crash step is a restart step by SIGKILL: the same keys, defaults and
// rules, named and described as a crash.
func TestCrashStep(t *testing.T) {
	s := mustParse(t, "steps:\n  - kind: crash\n  - {kind: crash, direction: uplink, size: 64, rate: 1Gbps, duration: 3s, at: 1s}\n")
	want := Restart{Direction: Both, Size: Size{Bytes: 1400}, Rate: Rate{PPS: 100_000}, Duration: 6 * time.Second, At: 2 * time.Second}
	if got := s.Steps[0].Settings.(*Crash).Restart; got != want {
		t.Errorf("defaults %+v; want %+v", got, want)
	}
	for i, want := range []struct{ name, setup string }{
		{"crash both 1400 B 100kpps", "both at once, 1400 B, 100kpps each way for 6s, SIGKILL at 2s"},
		{"crash uplink 64 B 1Gbps", "uplink, 64 B, 1Gbps each way for 3s, SIGKILL at 1s"},
	} {
		if st := s.Steps[i]; st.Name != want.name || st.Setup() != want.setup {
			t.Errorf("steps[%d]: name %q, setup %q; want %q, %q", i, st.Name, st.Setup(), want.name, want.setup)
		}
	}
	if !s.Restarts() {
		t.Error("a crash step does not pin upfd")
	}
	_, err := Parse("scenario.yaml", []byte("steps:\n  - kind: crash\n    duration: 2s\n    at: 2s\n"))
	if want := `scenario.yaml:4: steps[0].at: 2s is not before the end of the traffic, duration: 2s (line 3); restart within it, e.g. at: 667ms`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	b, err := os.ReadFile("crash.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse("crash.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	if c.UPF.Kind != UPFBuiltIn || c.Sessions.Count != 1000 || !c.Restarts() || len(c.Steps) != 2 || c.Steps[0].Kind != KindCrash {
		t.Errorf("crash.yaml: %s with %d sessions, steps %+v; want upfd, 1000, two crash steps", c.UPF.Kind, c.Sessions.Count, c.Steps)
	}
}
