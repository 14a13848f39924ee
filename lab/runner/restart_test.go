package runner

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/config"
	"github.com/sluice-upf/sluice/lab/scenario"
)

// TestPinnedConfigKeepsOverrides: the lab's pin_path and state_file join
// the scenario's upfd overrides, in whatever style they are written, and
// upfd reads them all.
func TestPinnedConfigKeepsOverrides(t *testing.T) {
	keys := []setting{{"pin_path", "/sys/fs/bpf/upflab-x"}, {"state_file", "/tmp/upflab-x/state.journal"}}
	for _, tc := range []struct {
		name, overrides string
		sessions        int
	}{
		{"none", "", config.Default().MaxSessions},
		{"block", "max_sessions: 2000\nxdp_mode: generic\n", 2000},
		{"flow", "{max_sessions: 3000}\n", 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := withKeys([]byte(tc.overrides), keys)
			if err != nil {
				t.Fatal(err)
			}
			c, err := config.Parse("upf.yaml", b)
			if err != nil {
				t.Fatalf("upfd refuses\n%s: %v", b, err)
			}
			if c.PinPath != keys[0].value || c.StateFile != keys[1].value || c.MaxSessions != tc.sessions {
				t.Errorf("pin_path %q, state_file %q, max_sessions %d from\n%s", c.PinPath, c.StateFile, c.MaxSessions, b)
			}
		})
	}
}

// TestPrivilegedRestartLosesNothing runs a small restart scenario against
// upfd end to end: both directions at a modest rate across a restart
// (SIGTERM), then across a crash (SIGKILL), not a frame lost, duplicated
// or reordered; N4 back with the same Recovery Time Stamp and every
// session; and no pin left behind.
func TestPrivilegedRestartLosesNothing(t *testing.T) {
	lab := fmt.Sprintf("sluicerr%d", os.Getpid()%100000)
	run := runUPFD(t, "restart.yaml", lab, `
topology: {name: %s}
reference: false
sessions: {count: 20}
steps:
  - {kind: restart, direction: both, size: 64, rate: 10kpps, duration: 2s, at: 500ms}
  - {kind: crash, direction: both, size: 64, rate: 10kpps, duration: 2s, at: 500ms}
outputs: {directory: %s, formats: [json]}
`, time.Minute)
	for _, kind := range []string{scenario.KindRestart, scenario.KindCrash} {
		t.Run(kind, func(t *testing.T) {
			st := stepOf(t, run, kind, "")
			if st.Error != "" {
				t.Errorf("step failed: %s", st.Error)
			}
			x := st.Restart
			if x == nil {
				t.Fatal("no restart result")
			}
			if len(x.Directions) != 2 {
				t.Errorf("%d directions measured; want 2", len(x.Directions))
			}
			var away uint64
			for _, d := range x.Directions {
				// The generator may fall far behind 10 kpps while upfd loads
				// its programs on a busy host (2961 of 20000 sent with
				// other work on the VM); what it sent must all arrive, but
				// for what the lab's veths refused on a starved host
				// (checkExact).
				if d.TxPackets == 0 || d.RxPackets+d.Refused != d.TxPackets || d.Lost != d.Refused || d.Duplicates != 0 || d.Reordered != 0 {
					t.Errorf("%s: sent %d (%d while upfd was away), received %d, lost %d (the lab's veths refused %d), %d duplicates, %d reordered; want up to 20000 sent, all received once, in order",
						d.Direction, d.TxPackets, d.SentWhileAway, d.RxPackets, d.Lost, d.Refused, d.Duplicates, d.Reordered)
				}
				away += d.SentWhileAway
			}
			// A starved worker may send nothing in the time upfd is away
			// (0 of 8040 uplink, while downlink sent 3230): the other
			// direction's frames cross the restart then.
			if away == 0 {
				t.Error("no frame sent while upfd was away; want some, in one direction at least")
			}
			if x.RestartMs <= 0 || x.StopMs <= 0 || x.RestartMs < x.StopMs {
				t.Errorf("stopped after %.1f ms, N4 back after %.1f ms", x.StopMs, x.RestartMs)
			}
			if !x.SameRecovery() || x.Sessions != 20 || x.SessionsAccepted != 20 {
				t.Errorf("Recovery Time Stamp %v before, %v after; %d of %d sessions accepted a modification; want the same, 20 of 20",
					x.RecoveryBefore, x.RecoveryAfter, x.SessionsAccepted, x.Sessions)
			}
			if want := map[string]string{scenario.KindRestart: "SIGTERM", scenario.KindCrash: "SIGKILL"}[kind]; x.SignalName() != want {
				t.Errorf("signal %s, want %s", x.SignalName(), want)
			}
		})
	}
	if _, err := os.Stat(pinDir(lab)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after the run: %v; want it removed", pinDir(lab), err)
	}
}
