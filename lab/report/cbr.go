package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

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

// cbrKind writes the goodput of each size, as ocbr does.
type cbrKind struct{}

func (cbrKind) has(s *Step) bool { return len(s.CBR) > 0 }

// AddCBR adds the goodput of some sizes to the step h.
func (r *Run) AddCBR(h Header, points ...CBR) {
	s := r.step(h)
	s.CBR = append(s.CBR, points...)
}

// cbrTable has a row per step and size.
func cbrTable(run *Run) *table {
	t := &table{left: 2, header: []string{"#", "Step", "Size<br>bytes", "Offered<br>Kpps", "Sent", "Received", "Loss %", "Goodput<br>pps", "<br>Mbit/s"}}
	for i, s := range run.Steps {
		for _, c := range s.CBR {
			t.add(strconv.Itoa(i+1), cell(s.Name), strconv.Itoa(c.Size), offeredText(c.OfferedKpps),
				count(c.Sent), count(c.Received), lossText(c.LossPct), fmt.Sprintf("%.0f", c.PPS), f2(c.Mbps))
		}
	}
	return t
}

func (cbrKind) section(b *strings.Builder, run *Run) {
	if t := cbrTable(run); len(t.rows) > 0 {
		t.write(b)
	}
}

func (cbrKind) text(b *strings.Builder, run *Run) {
	if t := cbrTable(run); len(t.rows) > 0 {
		t.writeText(b)
	}
}

func (cbrKind) rows(s Step) []row {
	var rows []row
	for _, c := range s.CBR {
		rows = append(rows, row{
			"through": "upf", "size": strconv.Itoa(c.Size), "offered_kpps": num(c.OfferedKpps), "seconds": num(c.Seconds),
			"tx_packets": count(c.Sent), "rx_packets": count(c.Received), "loss_pct": num(c.LossPct),
			"goodput_pps": num(c.PPS), "goodput_mbps": num(c.Mbps),
		})
	}
	return rows
}

// compare sets the goodput side by side, by size.
func (cbrKind) compare(b *strings.Builder, rows []compared, ratio string) {
	compareBySize(b, rows, ratio, "Goodput<br>Mbit/s", func(s *Step) map[int]float64 {
		return byKey(s.CBR, func(c CBR) (int, float64, bool) { return c.Size, c.Mbps, true })
	})
}

// plots draw the goodput in packets and in Mbit/s by size, as ocbr's,
// beside what was sent (and offered, at a set rate), over the loss.
func (cbrKind) plots(s Step, file func(string) string) []Plot {
	var pps, sentPPS, offered, mbps, sentMbps, loss []point
	for _, c := range s.CBR {
		x, sent := float64(c.Size), perSecond(float64(c.Sent), c.Seconds)
		pps, sentPPS = append(pps, point{x, c.PPS}), append(sentPPS, point{x, sent})
		mbps, sentMbps = append(mbps, point{x, c.Mbps}), append(sentMbps, point{x, sent * x * 8 / 1e6})
		loss = append(loss, point{x, c.LossPct})
		if c.OfferedKpps > 0 {
			offered = append(offered, point{x, c.OfferedKpps * 1e3})
		}
	}
	packets := []series{{name: "goodput", points: pps}, {name: "sent", points: sentPPS, color: 2}}
	if len(offered) > 0 {
		packets = append(packets, series{name: "offered", points: offered, color: 2, dashed: true})
	}
	lost := chart{title: "Loss by size: " + s.Name, xLabel: "UDP payload (bytes)", yLabel: "loss (%)",
		series: []series{{name: "lost", points: loss, color: 3}}}
	plot := func(name, title, yLabel string, lines []series) Plot {
		return Plot{File: file(name), Title: title, charts: []chart{
			{title: title, xLabel: "UDP payload (bytes)", yLabel: yLabel, series: lines}, lost}}
	}
	return []Plot{
		plot("pps", "Goodput in packets by size: "+s.Name, "packets/s", packets),
		plot("mbps", "Goodput in Mbit/s by size: "+s.Name, "Mbit/s (payload)",
			[]series{{name: "goodput", points: mbps}, {name: "sent", points: sentMbps, color: 2}}),
	}
}
