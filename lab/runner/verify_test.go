package runner

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
)

// upfd passes every check of the short suite, the one upflab verify
// --short runs: CI's scorecard. A check's verdict is the UPF's behaviour
// against exact counts, not the machine's speed: a line whose conditions
// the host could not make (report.Check.Host) is logged, not judged.
func TestPrivilegedVerifyShort(t *testing.T) {
	testenv.RequirePrivileges(t)
	s, err := scenario.VerifySuite(true, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s.Topology.Name = fmt.Sprintf("sluicevf%d", os.Getpid()%100000)
	s.Outputs.Directory = dir
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run, err := Run(ctx, s, Options{Dir: dir, Progress: testWriter{t}, UPFD: buildUPFD(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range run.Steps {
		if st.Error != "" {
			t.Errorf("step %s: %s", st.Name, st.Error)
		}
		for _, c := range st.Checks {
			t.Logf("%s: %s: %s (limit %s) %s", st.Name, c.Name, c.FigureText(), c.LimitText(), c.Note)
			if c.Host {
				t.Logf("%s: %s: not judged, the host could not make its conditions: %s", st.Name, c.Name, c.Note)
				continue
			}
			if c.Verdict != report.Pass {
				t.Errorf("%s: %s: %s, %s against %s: %s", st.Name, c.Name, c.Verdict, c.FigureText(), c.LimitText(), c.Note)
			}
		}
	}
	if n := run.Verdicts(); n[report.Pass] == 0 {
		t.Errorf("no check passed: %v", n)
	}
}
