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
	"math"
	"slices"
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

// Header says which step a result belongs to.
type Header struct {
	Name  string `json:"name"`  // unique in the run; Compare matches steps by it
	Kind  string `json:"kind"`  // throughput, ndr, ping, cbr, subscribers, churn or restart
	Setup string `json:"setup"` // what the step did, in a few words
}

// Step is the results of one step; the field of its kind is set, or
// Error when the step failed.
type Step struct {
	Header
	Error       string           `json:"error,omitempty"`
	Throughput  []Measurement    `json:"throughput,omitempty"`
	NDR         []Search         `json:"ndr,omitempty"`
	Ping        []Ping           `json:"ping,omitempty"`
	CBR         []CBR            `json:"cbr,omitempty"`
	Subscribers []SubscriberLoad `json:"subscribers,omitempty"`
	Churn       *Churn           `json:"churn,omitempty"`
	Restart     *Restart         `json:"restart,omitempty"`
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
	// Latency is one way, from the generator's stamp to the sink; nil
	// when the sink kept no histogram.
	Latency *Latency `json:"latency,omitempty"`
	CPU     *CPU     `json:"cpu,omitempty"`
	// Reference is the reference forwarder under the same load, and
	// RatioToReference this Rx packet rate over its (packets, not bits:
	// the reference forwards the tunnel headers that a UPF removes).
	Reference        *Measurement `json:"reference,omitempty"`
	RatioToReference *float64     `json:"ratio_to_reference,omitempty"`
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

// Search is a non-drop (or partial-drop) rate search in one direction.
type Search struct {
	Direction        string  `json:"direction"`
	Size             string  `json:"size"`
	LossTolerancePct float64 `json:"loss_tolerance_pct"`
	Found            bool    `json:"found"` // some trial passed
	// Result is the passing trial at the highest offered rate.
	Result           Measurement `json:"result"`
	Trials           []Trial     `json:"trials"`
	Reference        *Search     `json:"reference,omitempty"`
	RatioToReference *float64    `json:"ratio_to_reference,omitempty"` // of Result's Rx packet rates
}

// Trial is one rate the search tried.
type Trial struct {
	Measurement
	Passed bool `json:"passed"` // loss within the tolerance
}

// NewSearch makes a search's result from its trials, in the order run.
func NewSearch(direction, size string, lossTolerancePct float64, trials []Trial) Search {
	s := Search{Direction: direction, Size: size, LossTolerancePct: lossTolerancePct, Trials: trials}
	for _, t := range trials {
		if t.Passed && (!s.Found || offered(t.Measurement) > offered(s.Result)) {
			s.Found, s.Result = true, t.Measurement
		}
	}
	return s
}

// offered is a trial's offered rate; flat out is above any other.
func offered(m Measurement) float64 {
	if m.OfferedKpps == 0 {
		return math.Inf(1)
	}
	return m.OfferedKpps
}

// Ping is the round trips of one size, in ping's terms.
type Ping struct {
	Target      string  `json:"target"`
	Size        int     `json:"size"` // ICMP payload bytes
	Transmitted int     `json:"transmitted"`
	Received    int     `json:"received"`
	LossPct     float64 `json:"loss_pct"`
	TimeMs      float64 `json:"time_ms"` // from the first request to the last answer
	MinMs       float64 `json:"rtt_min_ms"`
	AvgMs       float64 `json:"rtt_avg_ms"`
	MaxMs       float64 `json:"rtt_max_ms"`
	MdevMs      float64 `json:"rtt_mdev_ms"`
}

// NewPing summarizes the round-trip times of the answers to transmitted
// requests as ping does: mdev is the standard deviation.
func NewPing(target string, size, transmitted int, rtts []time.Duration, elapsed time.Duration) Ping {
	p := Ping{Target: target, Size: size, Transmitted: transmitted, Received: len(rtts),
		LossPct: lossPct(uint64(transmitted), uint64(len(rtts))), TimeMs: ms(elapsed)}
	if len(rtts) == 0 {
		return p
	}
	var sum, squares float64
	for _, d := range rtts {
		sum, squares = sum+ms(d), squares+ms(d)*ms(d)
	}
	n := float64(len(rtts))
	p.MinMs, p.MaxMs = ms(slices.Min(rtts)), ms(slices.Max(rtts))
	p.AvgMs = sum / n
	p.MdevMs = math.Sqrt(max(squares/n-p.AvgMs*p.AvgMs, 0))
	return p
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// CBR is the goodput of one size at a constant rate or flood, in ocbr's
// terms: what arrived, per second.
type CBR struct {
	Size        int     `json:"size"`         // UDP payload bytes
	OfferedKpps float64 `json:"offered_kpps"` // 0: flood
	Seconds     float64 `json:"seconds"`
	Sent        uint64  `json:"sent"`
	Received    uint64  `json:"received"`
	LossPct     float64 `json:"loss_pct"`
	PPS         float64 `json:"goodput_pps"`
	Mbps        float64 `json:"goodput_mbps"` // payload bits only
}

// NewCBR makes a CBR result from packets sent and received over elapsed.
func NewCBR(size int, offeredKpps float64, elapsed time.Duration, sent, received uint64) CBR {
	s := elapsed.Seconds()
	pps := perSecond(float64(received), s)
	return CBR{Size: size, OfferedKpps: offeredKpps, Seconds: s, Sent: sent, Received: received,
		LossPct: lossPct(sent, received), PPS: pps, Mbps: pps * float64(size) * 8 / 1e6}
}

// SubscriberLoad is the subscriber model at one count: both directions at
// once. Upload and download speed are the Rx rates.
type SubscriberLoad struct {
	Subscribers int         `json:"subscribers"`
	Uplink      Measurement `json:"uplink"`
	Downlink    Measurement `json:"downlink"`
	CPU         *CPU        `json:"cpu,omitempty"` // of both directions together
}

// Churn is sessions deleted and established again while others forward.
type Churn struct {
	TargetPerSecond   float64 `json:"target_per_second"`
	AchievedPerSecond float64 `json:"achieved_per_second"`
	Seconds           float64 `json:"seconds"`
	Established       int     `json:"established"`
	Deleted           int     `json:"deleted"`
	Failed            int     `json:"failed"` // requests answered with a cause other than accepted, or not at all
	SetupP50Ms        float64 `json:"setup_p50_ms"`
	SetupP99Ms        float64 `json:"setup_p99_ms"`
}
