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

// AddThroughput adds measurements, one per direction, to the step h.
func (r *Run) AddThroughput(h Header, ms ...Measurement) {
	s := r.step(h)
	for _, m := range ms {
		m.RatioToReference = packetRatio(m, m.Reference)
		s.Throughput = append(s.Throughput, m)
	}
}

// AddNDR adds searches, one per direction, to the step h.
func (r *Run) AddNDR(h Header, searches ...Search) {
	s := r.step(h)
	for _, search := range searches {
		if ref := search.Reference; ref != nil && ref.Found {
			search.RatioToReference = packetRatio(search.Result, &ref.Result)
		}
		s.NDR = append(s.NDR, search)
	}
}

// AddPing adds the round trips of some sizes to the step h.
func (r *Run) AddPing(h Header, pings ...Ping) {
	s := r.step(h)
	s.Ping = append(s.Ping, pings...)
}

// AddCBR adds the goodput of some sizes to the step h.
func (r *Run) AddCBR(h Header, points ...CBR) {
	s := r.step(h)
	s.CBR = append(s.CBR, points...)
}

// AddSubscribers adds the model's results at some counts to the step h.
func (r *Run) AddSubscribers(h Header, loads ...SubscriberLoad) {
	s := r.step(h)
	for _, l := range loads {
		l.Uplink.RatioToReference = packetRatio(l.Uplink, l.Uplink.Reference)
		l.Downlink.RatioToReference = packetRatio(l.Downlink, l.Downlink.Reference)
		s.Subscribers = append(s.Subscribers, l)
	}
}

// AddChurn sets the result of the churn step h.
func (r *Run) AddChurn(h Header, c Churn) {
	r.step(h).Churn = &c
}

// AddError records that the step h failed, and why; the run goes on.
func (r *Run) AddError(h Header, err error) {
	r.step(h).Error = err.Error()
}

// packetRatio is m's Rx packet rate over ref's, or nil without a
// reference that received anything.
func packetRatio(m Measurement, ref *Measurement) *float64 {
	if ref == nil || ref.RxKpps == 0 {
		return nil
	}
	ratio := m.RxKpps / ref.RxKpps
	return &ratio
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
