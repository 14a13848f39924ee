package report

import (
	"fmt"
	"strconv"
	"strings"
)

// throughputKind writes a measurement per direction, beside the reference
// forwarder's under the same load.
type throughputKind struct{}

func (throughputKind) has(s *Step) bool { return len(s.Throughput) > 0 }

// AddThroughput adds measurements, one per direction, to the step h.
func (r *Run) AddThroughput(h Header, ms ...Measurement) {
	s := r.step(h)
	for _, m := range ms {
		m.RatioToReference, m.RatioSpread = PacketRatio(m, m.Reference)
		s.Throughput = append(s.Throughput, m)
	}
}

// directionHeader is the seed's column group for one direction:
// "UpLink<br>Gbps | <br>Kpps | ...", ratio last.
func directionHeader(title, ratio string) []string {
	return []string{title + "<br>Gbps", "<br>Kpps", "<br>Loss %", "<br>CPU %[1]", "<br>" + ratio}
}

func throughputHeader(first []string, ratio string) []string {
	h := append(first, directionHeader("UpLink", ratio)...)
	return append(h, directionHeader("DownLink", ratio)...)
}

// directionCells are one measurement's cells under directionHeader; a
// direction not measured is a dash.
func directionCells(m *Measurement, ratio string) []string {
	if m == nil {
		return repeat("–", 5)
	}
	return []string{
		txRx(f2(m.TxGbps), f2(m.RxGbps)), txRx(f2(m.TxKpps), f2(m.RxKpps)),
		lossText(m.LossPct), cpuText(m.CPU), ratio,
	}
}

// throughputCells are the cells of both directions; ratio writes each
// one's.
func throughputCells(ms []Measurement, ratio func(Measurement) string) []string {
	var cells []string
	for _, dir := range []string{"uplink", "downlink"} {
		m := byDirection(ms, dir)
		var r string
		if m != nil {
			r = ratio(*m)
		}
		cells = append(cells, directionCells(m, r)...)
	}
	return cells
}

func byDirection(ms []Measurement, direction string) *Measurement {
	for i := range ms {
		if ms[i].Direction == direction {
			return &ms[i]
		}
	}
	return nil
}

// references are the reference measurements beside ms, in the same order.
func references(ms []Measurement) []Measurement {
	var refs []Measurement
	for _, m := range ms {
		if m.Reference != nil {
			refs = append(refs, *m.Reference)
		}
	}
	return refs
}

// ownRatio is m's ratio to the reference, with its spread.
func ownRatio(m Measurement) string { return RatioText(m.RatioToReference, m.RatioSpread) }

func noRatio(Measurement) string { return "" }

func (throughputKind) section(b *strings.Builder, run *Run) {
	t := &table{header: throughputHeader([]string{"#", "Step"}, "x ref[2]")}
	for i, s := range run.Steps {
		if len(s.Throughput) == 0 {
			continue
		}
		t.add(append([]string{strconv.Itoa(i + 1), stepCell(s.Header)}, throughputCells(s.Throughput, ownRatio)...)...)
		if refs := references(s.Throughput); len(refs) > 0 {
			t.add(append([]string{"", "↳ reference forwarder"}, throughputCells(refs, noRatio)...)...)
		}
	}
	if len(t.rows) == 0 {
		return
	}
	t.write(b)
	fmt.Fprintf(b, "1. %s\n2. %s\n\n", cpuNote, ratioNote)
	if closedLoop(run) {
		fmt.Fprintf(b, "%s\n\n", coreNote)
	}
	latencySection(b, run)
}

// closedLoop says whether a throughput step of run ran on one core.
func closedLoop(run *Run) bool {
	for _, s := range run.Steps {
		for _, m := range s.Throughput {
			if m.CoreSeconds > 0 {
				return true
			}
		}
	}
	return false
}

// latencySection shows the one-way latencies, when the sink kept them.
func latencySection(b *strings.Builder, run *Run) {
	t := &table{header: []string{"#", "Step", "Direction", "Latency p50<br>µs", "p99<br>µs", "max<br>µs"}}
	for i, s := range run.Steps {
		for _, m := range s.Throughput {
			if l := m.Latency; l != nil {
				t.add(strconv.Itoa(i+1), cell(s.Name), m.Direction, f1(l.P50), f1(l.P99), f1(l.Max))
			}
		}
	}
	if len(t.rows) > 0 {
		b.WriteString("One-way latency, generator to sink:\n\n")
		t.write(b)
	}
}

// text gives each step a row of Rx rates, losses and ratios, and the
// reference forwarder's below: the columns of the README's table.
func (throughputKind) text(b *strings.Builder, run *Run) {
	t := &table{left: 2, header: []string{"#", "Step", "Uplink<br>Rx kpps", "<br>loss %", "<br>x ref",
		"Downlink<br>Rx kpps", "<br>loss %", "<br>x ref"}}
	for i, s := range run.Steps {
		if len(s.Throughput) == 0 {
			continue
		}
		t.add(append([]string{strconv.Itoa(i + 1), s.Name}, rxCells(s.Throughput, ownRatio)...)...)
		if refs := references(s.Throughput); len(refs) > 0 {
			t.add(append([]string{"", "  reference forwarder"}, rxCells(refs, noRatio)...)...)
		}
	}
	if len(t.rows) == 0 {
		return
	}
	notes := []string{textRatioNote}
	if closedLoop(run) {
		notes = append(notes, "1 core: the closed loop; its rates are per second of the time the core gave the traffic.")
	}
	t.writeText(b, notes...)
}

// textRatioNote explains x ref in the terminal's tables.
const textRatioNote = "x ref: Rx packet rate over the reference forwarder's, in the same run; in rounds the median, and the middle half in brackets."

// rxCells are each direction's Rx rate, loss and ratio; a direction not
// measured is dashes.
func rxCells(ms []Measurement, ratio func(Measurement) string) []string {
	var cells []string
	for _, dir := range []string{"uplink", "downlink"} {
		m := byDirection(ms, dir)
		if m == nil {
			cells = append(cells, "–", "–", "")
			continue
		}
		cells = append(cells, f1(m.RxKpps), lossText(m.LossPct), ratio(*m))
	}
	return cells
}

// plots draw each round's Rx rate over its loss, a colour a direction,
// the reference forwarder's dashed beside the UPF's, and, in rounds
// beside the reference, each round's ratio to it. A step of one round has
// a point each.
func (throughputKind) plots(s Step, file func(string) string) []Plot {
	var rates, losses, ratios []series
	for c, m := range s.Throughput {
		if ref := m.Reference; ref != nil && len(m.Rounds) > 1 && len(m.Rounds) == len(ref.Rounds) {
			var points []point
			for i := range m.Rounds {
				if ref.Rounds[i].RxKpps > 0 {
					points = append(points, point{float64(i + 1), m.Rounds[i].RxKpps / ref.Rounds[i].RxKpps})
				}
			}
			ratios = append(ratios, series{name: m.Direction, color: c, points: points})
		}
		for _, x := range []struct {
			m      *Measurement
			name   string
			dashed bool
		}{{&m, m.Direction, false}, {m.Reference, m.Direction + ", reference forwarder", true}} {
			if x.m == nil {
				continue
			}
			rates = append(rates, series{name: x.name, color: c, dashed: x.dashed, points: byRound(*x.m, func(r Round) float64 { return r.RxKpps / 1e3 })})
			losses = append(losses, series{name: x.name, color: c, dashed: x.dashed, points: byRound(*x.m, func(r Round) float64 { return r.LossPct })})
		}
	}
	charts := []chart{
		{title: "Rx rate by round: " + s.Name, xLabel: "round", yLabel: "Mpps", series: rates},
		{title: "Loss by round: " + s.Name, xLabel: "round", yLabel: "loss (%)", series: losses},
	}
	if len(ratios) > 0 {
		charts = append(charts, chart{title: "Ratio to the reference forwarder by round: " + s.Name,
			xLabel: "round", yLabel: "x ref", series: ratios})
	}
	return []Plot{{File: file("rate"), Title: "Throughput and loss by round: " + s.Name, charts: charts}}
}

// byRound is a figure of each of m's rounds, or of m itself as round 1.
func byRound(m Measurement, figure func(Round) float64) []point {
	rounds := m.Rounds
	if len(rounds) == 0 {
		rounds = []Round{{TxKpps: m.TxKpps, RxKpps: m.RxKpps, LossPct: m.LossPct}}
	}
	points := make([]point, len(rounds))
	for i, r := range rounds {
		points[i] = point{float64(i + 1), figure(r)}
	}
	return points
}

func (throughputKind) rows(s Step) []row {
	var rows []row
	for _, m := range s.Throughput {
		rows = append(rows, measurementRows(m, row{})...)
	}
	return rows
}

// compare sets each run's Rx rate and ratio to its own reference side by
// side, and that ratio over the first run's.
func (throughputKind) compare(b *strings.Builder, rows []compared, ratio string) {
	t := &table{header: []string{"#", "UPF / Date"}}
	for _, dir := range []string{"UpLink", "DownLink"} {
		t.header = append(t.header, dir+"<br>Rx Kpps", "<br>Loss %", "<br>x ref[1]", "<br>"+ratio+"[2]")
	}
	first := rows[0].step.Throughput
	addRows(t, rows, func(s *Step) []string {
		var cells []string
		for _, dir := range []string{"uplink", "downlink"} {
			m, f := byDirection(s.Throughput, dir), byDirection(first, dir)
			if m == nil {
				cells = append(cells, repeat("–", 4)...)
				continue
			}
			cells = append(cells, f2(m.RxKpps), lossText(m.LossPct), ownRatio(*m), versusFirst(m, f))
		}
		return cells
	})
	t.write(b)
	fmt.Fprintf(b, "1. %s\n2. %s\n\n", compareRatioNote, versusNote(rows[0].label))
}

// versusFirst is m's ratio to its reference over f's, or, if either has
// none, m's Rx rate over f's, marked.
func versusFirst(m, f *Measurement) string {
	if f == nil {
		return ""
	}
	return versus(m.RatioToReference, f.RatioToReference, m.RxKpps, f.RxKpps)
}
