// Package report holds the results of a lab run and writes them: JSON
// (FormatVersion; docs/lab.md lists every field), CSV with one row per
// measurement, a Markdown summary in the shape of the published TRex and
// iperf tables, and PNG plots. Compare sets several runs side by side.
//
// A run is filled step by step as it goes:
//
//	run := report.New("default", report.UPF{Name: "upfd", Version: v}, sessions)
//	run.AddThroughput(step.Header(), uplink, downlink)
//	...
//	run.Finish()
//	files, err := report.Write(run, dir, report.Formats)
//
// Every throughput figure that has a Reference, the reference forwarder
// measured in the same run under the same load, also gets its ratio to it.
package report

import (
	"time"

	"github.com/sluice-upf/sluice/lab/cpu"
)

// FormatVersion names the JSON layout; it changes when a field changes
// meaning or goes away, not when one is added.
const FormatVersion = "upflab-run/1"

// Run is one `upflab run`: what ran, where, and what it measured.
type Run struct {
	Format    string      `json:"format"`
	Scenario  string      `json:"scenario"`
	Started   time.Time   `json:"started"`
	Finished  time.Time   `json:"finished"`
	Host      Host        `json:"host"`
	UPF       UPF         `json:"upf"`
	Sessions  Sessions    `json:"sessions"`
	Placement []Placement `json:"placement"`
	Steps     []Step      `json:"steps"`
}

// Host is the machine the lab ran on.
type Host struct {
	Name     string `json:"name"`
	Kernel   string `json:"kernel"`
	CPUModel string `json:"cpu_model"`
	CPUs     int    `json:"cpus"`
}

// UPF is the UPF under test.
type UPF struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Command string `json:"command,omitempty"` // as run, placeholders filled
}

// Sessions are what the SMF emulator established before the steps.
type Sessions struct {
	Count   int    `json:"count"`
	Profile string `json:"profile"`
	Flows   int    `json:"flows"` // per session
	// PerSecond is the rate at which they were established.
	PerSecond float64 `json:"established_per_second"`
}

// Placement says which core ran what: the generator, the sink, the UPF's
// processes, the queues whose softirq carries the UPF's XDP.
type Placement struct {
	Core int    `json:"core"`
	Runs string `json:"runs"`
}

// Measurement is one direction of traffic for a while. Rates count
// Ethernet frames as sent and as received (without preamble and FCS, like
// TRex's "L2"), so an uplink's Rx bits are fewer than its Tx bits by the
// tunnel headers the UPF removed, even without loss.
type Measurement struct {
	Direction   string  `json:"direction"`    // uplink or downlink
	Size        string  `json:"size"`         // payload bytes, or "imix"
	OfferedKpps float64 `json:"offered_kpps"` // 0: flat out
	Seconds     float64 `json:"seconds"`
	TxPackets   uint64  `json:"tx_packets"`
	RxPackets   uint64  `json:"rx_packets"`
	TxGbps      float64 `json:"tx_gbps"`
	TxKpps      float64 `json:"tx_kpps"`
	RxGbps      float64 `json:"rx_gbps"`
	RxKpps      float64 `json:"rx_kpps"`
	LossPct     float64 `json:"loss_pct"`
	// Refused are the frames, of those lost, that a veth of the lab
	// refused because its peer's ring was full: the generator's, and the
	// UPF's toward the sink (xdp_xmit_errors). A starved host shows here
	// (a sink or UPF that did not run in time), not a UPF that dropped.
	Refused uint64 `json:"refused,omitempty"`
	// BPFStats says that BPF's run-time statistics were on during the
	// measurement, or some round of it: another process turned them on
	// for the whole machine, and every XDP program run paid two clock
	// reads more, the reference forwarder's as the UPF's, which draws
	// ratios toward 1.
	BPFStats bool `json:"bpf_stats,omitempty"`
	// CoreSeconds is set in a closed loop: the CPU time its one core gave
	// the measurement, which the rates are per second of (PerCoreSecond).
	CoreSeconds float64 `json:"core_seconds,omitempty"`
	// Rounds are the rounds, in the order run, when the step ran in
	// rounds.
	Rounds []Round `json:"rounds,omitempty"`
	// Latency is one way, from the generator's stamp to the sink; nil
	// when the sink kept no histogram.
	Latency *Latency `json:"latency,omitempty"`
	CPU     *CPU     `json:"cpu,omitempty"`
	// Reference is the reference forwarder under the same load, and
	// RatioToReference this Rx packet rate over its (packets, not bits:
	// the reference forwards the tunnel headers that a UPF removes); in
	// rounds, the median of the rounds' ratios, RatioSpread their
	// quartiles.
	Reference        *Measurement `json:"reference,omitempty"`
	RatioToReference *float64     `json:"ratio_to_reference,omitempty"`
	RatioSpread      *Spread      `json:"ratio_spread,omitempty"`
}

// NewMeasurement makes a measurement from the generator's and the sink's
// counters over elapsed.
func NewMeasurement(direction, size string, offeredKpps float64, elapsed time.Duration,
	txPackets, txBytes, rxPackets, rxBytes uint64) Measurement {
	s := elapsed.Seconds()
	return Measurement{
		Direction: direction, Size: size, OfferedKpps: offeredKpps, Seconds: s,
		TxPackets: txPackets, RxPackets: rxPackets,
		TxGbps: perSecond(8*float64(txBytes), s) / 1e9, TxKpps: perSecond(float64(txPackets), s) / 1e3,
		RxGbps: perSecond(8*float64(rxBytes), s) / 1e9, RxKpps: perSecond(float64(rxPackets), s) / 1e3,
		LossPct: lossPct(txPackets, rxPackets),
	}
}

func perSecond(v, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return v / seconds
}

// lossPct is the share of sent packets that did not arrive; duplicates
// that arrive more than once do not make it negative.
func lossPct(sent, received uint64) float64 {
	if sent == 0 || received >= sent {
		return 0
	}
	return 100 * float64(sent-received) / float64(sent)
}

// Round is one round of a measurement in rounds: its rates, on the
// measurement's basis (per second of core time in a closed loop), and its
// loss.
type Round struct {
	TxKpps   float64 `json:"tx_kpps"`
	RxKpps   float64 `json:"rx_kpps"`
	LossPct  float64 `json:"loss_pct"`
	BPFStats bool    `json:"bpf_stats,omitempty"` // as Measurement.BPFStats
}

// Latency is a one-way latency distribution, in microseconds.
type Latency struct {
	P50 float64 `json:"p50_us"`
	P99 float64 `json:"p99_us"`
	Max float64 `json:"max_us"`
}

// CPU is what the UPF used during a measurement, in percent of one core.
type CPU struct {
	ProcessPct float64   `json:"process_pct"` // its processes and threads
	SoftirqPct float64   `json:"softirq_pct"` // softirq on the cores its traffic arrives on
	TotalPct   float64   `json:"total_pct"`   // the two together
	Cores      []CoreCPU `json:"cores"`       // every core, whoever used it
}

// CoreCPU is one core's use, in percent of it.
type CoreCPU struct {
	Core       int     `json:"core"`
	BusyPct    float64 `json:"busy_pct"`
	SoftirqPct float64 `json:"softirq_pct"`
}

// CPUOf turns a cpu.Usage of the UPF's processes into the UPF's CPU: its
// process time plus the softirq of upfCores, the cores whose queues carry
// its traffic (all cores when none is given).
func CPUOf(u cpu.Usage, upfCores ...int) *CPU {
	c := &CPU{ProcessPct: u.Process, SoftirqPct: u.Softirq(upfCores...)}
	c.TotalPct = c.ProcessPct + c.SoftirqPct
	for _, core := range u.Cores {
		c.Cores = append(c.Cores, CoreCPU{Core: core.CPU, BusyPct: core.Busy, SoftirqPct: core.Softirq})
	}
	return c
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
