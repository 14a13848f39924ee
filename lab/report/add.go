package report

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strings"
	"time"
)

// New starts the record of a run on this host, now.
func New(scenario string, upf UPF, sessions Sessions) *Run {
	return &Run{
		Format:   FormatVersion,
		Scenario: scenario,
		Started:  time.Now(),
		Host:     ThisHost(),
		UPF:      upf,
		Sessions: sessions,
	}
}

// Finish notes the end of the run.
func (r *Run) Finish() { r.Finished = time.Now() }

// Place notes that core runs what, e.g. "generator" or "upfd (XDP softirq)".
func (r *Run) Place(core int, runs string) {
	r.Placement = append(r.Placement, Placement{Core: core, Runs: runs})
}

// step is the step called h.Name, added at its first result.
func (r *Run) step(h Header) *Step {
	for i := range r.Steps {
		if r.Steps[i].Name == h.Name {
			return &r.Steps[i]
		}
	}
	r.Steps = append(r.Steps, Step{Header: h})
	return &r.Steps[len(r.Steps)-1]
}

// AddError records that the step h failed, and why; the run goes on.
func (r *Run) AddError(h Header, err error) {
	r.step(h).Error = err.Error()
}

// ThisHost describes the machine: host name, kernel release, CPU model and
// count. What cannot be read stays empty.
func ThisHost() Host {
	h := Host{CPUs: runtime.NumCPU()}
	h.Name, _ = os.Hostname()
	if release, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = "Linux " + strings.TrimSpace(string(release))
	}
	if info, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		h.CPUModel = cpuModel(info)
	}
	return h
}

// cpuModel finds the first "model name" of /proc/cpuinfo.
func cpuModel(cpuinfo []byte) string {
	lines := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for lines.Scan() {
		key, value, ok := strings.Cut(lines.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}
