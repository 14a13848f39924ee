package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

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

// pingKind writes the round trips of each size, as ping sums them up.
type pingKind struct{}

func (pingKind) has(s *Step) bool { return len(s.Ping) > 0 }

// AddPing adds the round trips of some sizes to the step h.
func (r *Run) AddPing(h Header, pings ...Ping) {
	s := r.step(h)
	s.Ping = append(s.Ping, pings...)
}

// pingTable has a row per step and size.
func pingTable(run *Run) *table {
	t := &table{left: 2, header: []string{"#", "Step", "Size<br>bytes", "Transmitted", "Received", "Loss %", "RTT min/avg/max/mdev<br>ms"}}
	for i, s := range run.Steps {
		for _, p := range s.Ping {
			t.add(strconv.Itoa(i+1), cell(s.Name), strconv.Itoa(p.Size), strconv.Itoa(p.Transmitted),
				strconv.Itoa(p.Received), lossText(p.LossPct), rttText(p))
		}
	}
	return t
}

func (pingKind) section(b *strings.Builder, run *Run) {
	t := pingTable(run)
	if len(t.rows) == 0 {
		return
	}
	t.write(b)
	var summaries strings.Builder
	for _, s := range run.Steps {
		for _, p := range s.Ping {
			pingSummary(&summaries, p)
		}
	}
	fmt.Fprintf(b, "```\n%s```\n\n", summaries.String())
}

func (pingKind) text(b *strings.Builder, run *Run) {
	if t := pingTable(run); len(t.rows) > 0 {
		t.writeText(b)
	}
}

func rttText(p Ping) string {
	return fmt.Sprintf("%.3f/%.3f/%.3f/%.3f", p.MinMs, p.AvgMs, p.MaxMs, p.MdevMs)
}

// pingSummary is what iputils ping prints at the end, under its first
// line: payload(IP packet) bytes.
func pingSummary(b *strings.Builder, p Ping) {
	const ipAndICMP = 20 + 8
	fmt.Fprintf(b, "PING %s (%s) %d(%d) bytes of data.\n", p.Target, p.Target, p.Size, p.Size+ipAndICMP)
	fmt.Fprintf(b, "--- %s ping statistics ---\n", p.Target)
	fmt.Fprintf(b, "%d packets transmitted, %d received, %s%% packet loss, time %.0fms\n",
		p.Transmitted, p.Received, strconv.FormatFloat(p.LossPct, 'g', 6, 64), p.TimeMs)
	if p.Received > 0 {
		fmt.Fprintf(b, "rtt min/avg/max/mdev = %s ms\n", rttText(p))
	}
	b.WriteString("\n")
}

func (pingKind) rows(s Step) []row {
	var rows []row
	for _, p := range s.Ping {
		rows = append(rows, row{
			"through": "upf", "size": strconv.Itoa(p.Size), "seconds": num(p.TimeMs / 1e3),
			"tx_packets": strconv.Itoa(p.Transmitted), "rx_packets": strconv.Itoa(p.Received), "loss_pct": num(p.LossPct),
			"rtt_min_ms": num(p.MinMs), "rtt_avg_ms": num(p.AvgMs), "rtt_max_ms": num(p.MaxMs), "rtt_mdev_ms": num(p.MdevMs),
		})
	}
	return rows
}

// compare sets the average round trip side by side, by size.
func (pingKind) compare(b *strings.Builder, rows []compared, ratio string) {
	compareBySize(b, rows, ratio, "RTT avg<br>ms", func(s *Step) map[int]float64 {
		return byKey(s.Ping, func(p Ping) (int, float64, bool) { return p.Size, p.AvgMs, p.Received > 0 })
	})
}

// plots draw the round trips by size, as oping's figures.
func (pingKind) plots(s Step, file func(string) string) []Plot {
	var lo, avg, hi []point
	for _, p := range s.Ping {
		if p.Received == 0 {
			continue // no answer, no time
		}
		x := float64(p.Size)
		lo, avg, hi = append(lo, point{x, p.MinMs}), append(avg, point{x, p.AvgMs}), append(hi, point{x, p.MaxMs})
	}
	title := "Round-trip time by size: " + s.Name
	return []Plot{{File: file("rtt"), Title: title, charts: []chart{{
		title: title, xLabel: "ICMP payload (bytes)", yLabel: "RTT (ms)",
		series: []series{{name: "avg", points: avg}, {name: "min", points: lo, color: 1}, {name: "max", points: hi, color: 2}},
	}}}}
}
