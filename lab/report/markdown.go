package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteMarkdown writes the run's summary: what ran where, then a table per
// kind of step, shaped like the published TRex and iperf summaries.
func WriteMarkdown(w io.Writer, run *Run) error {
	return writeMarkdown(w, run, false)
}

// writeMarkdown is WriteMarkdown, showing the plots Write draws beside it
// when withPlots.
func writeMarkdown(w io.Writer, run *Run, withPlots bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# upflab: %s\n\n", run.Scenario)
	runTable(run).write(&b)
	if len(run.Placement) > 0 {
		placementTable(run.Placement).write(&b)
	}
	sections := []struct {
		title string
		write func(*strings.Builder, *Run)
	}{
		{"Throughput", throughputSection},
		{"Non-drop rate", ndrSection},
		{"Round-trip time", pingSection},
		{"Constant bit rate", cbrSection},
		{"Subscribers", subscribersSection},
		{"Session churn", churnSection},
		{"Restart under traffic", restartSection},
	}
	for _, s := range sections {
		var section strings.Builder
		s.write(&section, run)
		if section.Len() > 0 {
			fmt.Fprintf(&b, "## %s\n\n%s", s.title, section.String())
		}
	}
	failedSection(&b, run)
	if withPlots {
		plotSection(&b, run)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// table is a Markdown table under construction.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(b *strings.Builder) {
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	line(t.header)
	line(repeat("---", len(t.header)))
	for _, r := range t.rows {
		line(r)
	}
	b.WriteString("\n")
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// cell makes text safe in a table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func runTable(run *Run) *table {
	t := &table{header: []string{"Run", ""}}
	took := ""
	if !run.Finished.IsZero() {
		took = fmt.Sprintf(", %s", run.Finished.Sub(run.Started).Round(time.Second))
	}
	t.add("Date", run.Started.UTC().Format("2006-01-02 15:04:05 MST")+took)
	t.add("Host", cell(hostText(run.Host)))
	t.add("UPF under test", cell(upfText(run.UPF)))
	if run.UPF.Command != "" {
		t.add("Command", "`"+cell(run.UPF.Command)+"`")
	}
	s := run.Sessions
	sessions := fmt.Sprintf("%d (%s, %d flow%s each)", s.Count, s.Profile, s.Flows, plural(s.Flows))
	if s.PerSecond > 0 {
		sessions += fmt.Sprintf(", established at %.0f/s", s.PerSecond)
	}
	t.add("Sessions", sessions)
	return t
}

// hostText is "name: kernel, CPU model × count", with what is known.
func hostText(h Host) string {
	var parts []string
	if h.Kernel != "" {
		parts = append(parts, h.Kernel)
	}
	if h.CPUs > 0 {
		parts = append(parts, strings.TrimSpace(fmt.Sprintf("%s × %d", h.CPUModel, h.CPUs)))
	}
	text := strings.Join(parts, ", ")
	switch {
	case h.Name != "" && text != "":
		return h.Name + ": " + text
	case h.Name != "":
		return h.Name
	case text == "":
		return "–"
	}
	return text
}

func upfText(u UPF) string {
	return strings.TrimSpace(u.Name + " " + u.Version)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func placementTable(places []Placement) *table {
	t := &table{header: []string{"Core", "Runs"}}
	for _, p := range places {
		t.add(strconv.Itoa(p.Core), cell(p.Runs))
	}
	return t
}

// The footnotes of the throughput tables.
const (
	cpuNote   = "CPU used by the UPF, in % of one core: its processes and threads, plus softirq on the cores its traffic arrives on (XDP runs there)."
	ratioNote = "Rx packet rate over the reference forwarder's, measured in the same run under the same load."
)

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
func directionCells(m *Measurement, ratio *float64) []string {
	if m == nil {
		return repeat("–", 5)
	}
	return []string{
		txRx(f2(m.TxGbps), f2(m.RxGbps)), txRx(f2(m.TxKpps), f2(m.RxKpps)),
		lossText(m.LossPct), cpuText(m.CPU), ratioText(ratio),
	}
}

// throughputCells are the cells of both directions; ratio picks each one's.
func throughputCells(ms []Measurement, ratio func(Measurement) *float64) []string {
	var cells []string
	for _, dir := range []string{"uplink", "downlink"} {
		m := byDirection(ms, dir)
		var r *float64
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

func ownRatio(m Measurement) *float64 { return m.RatioToReference }
func noRatio(Measurement) *float64    { return nil }

func throughputSection(b *strings.Builder, run *Run) {
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
	latencySection(b, run)
}

func stepCell(h Header) string {
	return cell(h.Name) + "<br>" + cell(h.Setup)
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

func ndrSection(b *strings.Builder, run *Run) {
	t := &table{header: []string{"#", "Step", "Direction", "Rate<br>Gbps", "<br>Kpps", "<br>Loss %", "<br>CPU %[1]", "<br>x ref[2]", "Trials"}}
	var details strings.Builder
	for i, s := range run.Steps {
		for _, search := range s.NDR {
			t.add(append([]string{strconv.Itoa(i + 1), stepCell(s.Header), search.Direction},
				searchCells(search, search.RatioToReference)...)...)
			if ref := search.Reference; ref != nil {
				t.add(append([]string{"", "↳ reference forwarder", ref.Direction}, searchCells(*ref, nil)...)...)
			}
			trialDetails(&details, s.Name, search)
		}
	}
	if len(t.rows) == 0 {
		return
	}
	t.write(b)
	fmt.Fprintf(b, "1. %s\n2. %s\n\n%s", cpuNote, ratioNote, details.String())
}

// searchCells are a search's result cells: the highest passing trial.
func searchCells(s Search, ratio *float64) []string {
	trials := strconv.Itoa(len(s.Trials))
	if !s.Found {
		return append(repeat("–", 5), trials+", none passed")
	}
	m := s.Result
	return []string{txRx(f2(m.TxGbps), f2(m.RxGbps)), txRx(f2(m.TxKpps), f2(m.RxKpps)),
		lossText(m.LossPct), cpuText(m.CPU), ratioText(ratio), trials}
}

// trialDetails lists a search's trials in a fold, as the seed keeps its
// logs.
func trialDetails(b *strings.Builder, step string, s Search) {
	t := &table{header: []string{"Trial", "Offered<br>Kpps", "Tx<br>Kpps", "Rx<br>Kpps", "Loss %", "Result"}}
	for i, tr := range s.Trials {
		result := "fail"
		if tr.Passed {
			result = "pass"
		}
		t.add(strconv.Itoa(i+1), offeredText(tr.OfferedKpps), f2(tr.TxKpps), f2(tr.RxKpps), lossText(tr.LossPct), result)
	}
	fmt.Fprintf(b, "<details><summary>Trials of %s, %s (loss tolerance %s %%)</summary>\n\n",
		cell(step), s.Direction, strconv.FormatFloat(s.LossTolerancePct, 'f', -1, 64))
	t.write(b)
	b.WriteString("</details>\n\n")
}

func pingSection(b *strings.Builder, run *Run) {
	t := &table{header: []string{"#", "Step", "Size<br>bytes", "Transmitted", "Received", "Loss %", "RTT min/avg/max/mdev<br>ms"}}
	var summaries strings.Builder
	for i, s := range run.Steps {
		for _, p := range s.Ping {
			t.add(strconv.Itoa(i+1), cell(s.Name), strconv.Itoa(p.Size), strconv.Itoa(p.Transmitted),
				strconv.Itoa(p.Received), lossText(p.LossPct), rttText(p))
			pingSummary(&summaries, p)
		}
	}
	if len(t.rows) == 0 {
		return
	}
	t.write(b)
	fmt.Fprintf(b, "```\n%s```\n\n", summaries.String())
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

func cbrSection(b *strings.Builder, run *Run) {
	t := &table{header: []string{"#", "Step", "Size<br>bytes", "Offered<br>Kpps", "Sent", "Received", "Loss %", "Goodput<br>pps", "<br>Mbit/s"}}
	for i, s := range run.Steps {
		for _, c := range s.CBR {
			t.add(strconv.Itoa(i+1), cell(s.Name), strconv.Itoa(c.Size), offeredText(c.OfferedKpps),
				count(c.Sent), count(c.Received), lossText(c.LossPct), fmt.Sprintf("%.0f", c.PPS), f2(c.Mbps))
		}
	}
	if len(t.rows) > 0 {
		t.write(b)
	}
}

// subscribersSection gives each subscribers step the columns of seed 003's
// Table II.
func subscribersSection(b *strings.Builder, run *Run) {
	for i, s := range run.Steps {
		if len(s.Subscribers) == 0 {
			continue
		}
		t := &table{header: []string{"Subscribers", "upload speed(Gbps)", "upload packet loss",
			"download speed(Gbps)", "download packet loss", "sent of the model<br>up / down[1]", "CPU %[2]",
			"x ref<br>up[3]", "x ref<br>down[3]"}}
		for _, l := range s.Subscribers {
			t.add(strconv.Itoa(l.Subscribers), f2(l.Uplink.RxGbps), seedLoss(l.Uplink.LossPct),
				f2(l.Downlink.RxGbps), seedLoss(l.Downlink.LossPct),
				sentOfOffered(l.Uplink)+" / "+sentOfOffered(l.Downlink), cpuText(l.CPU),
				ratioText(l.Uplink.RatioToReference), ratioText(l.Downlink.RatioToReference))
		}
		fmt.Fprintf(b, "**%d. %s**: %s\n\n", i+1, cell(s.Name), cell(s.Setup))
		t.write(b)
	}
	if b.Len() > 0 {
		fmt.Fprintf(b, "1. %s\n2. %s\n3. %s\n\n", sentNote, cpuNote, ratioNote)
	}
}

// sentNote explains sentOfOffered: a loss of 0 % means little when the
// generator could not offer the load.
const sentNote = "What the generator sent, in % of the packet rate the model offers. Below 100 %, this machine could not offer the whole load; the loss is of what was sent."

func sentOfOffered(m Measurement) string {
	if m.OfferedKpps == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f%%", 100*m.TxKpps/m.OfferedKpps)
}

// seedLoss writes a loss as seed 003 does: 0.02150%.
func seedLoss(pct float64) string { return fmt.Sprintf("%.5f%%", pct) }

func churnSection(b *strings.Builder, run *Run) {
	t := &table{header: []string{"#", "Step", "Target<br>/s", "Achieved<br>/s", "Established", "Deleted", "Failed",
		"Setup p50<br>ms", "Setup p99<br>ms"}}
	for i, s := range run.Steps {
		if c := s.Churn; c != nil {
			t.add(strconv.Itoa(i+1), cell(s.Name), f1(c.TargetPerSecond), f1(c.AchievedPerSecond),
				strconv.Itoa(c.Established), strconv.Itoa(c.Deleted), strconv.Itoa(c.Failed), f2(c.SetupP50Ms), f2(c.SetupP99Ms))
		}
	}
	if len(t.rows) > 0 {
		t.write(b)
	}
}

func failedSection(b *strings.Builder, run *Run) {
	var list strings.Builder
	for i, s := range run.Steps {
		if s.Error != "" {
			fmt.Fprintf(&list, "- Step %d, %s: %s\n", i+1, cell(s.Name), cell(s.Error))
		}
	}
	if list.Len() > 0 {
		fmt.Fprintf(b, "## Failed steps\n\n%s\n", list.String())
	}
}

func plotSection(b *strings.Builder, run *Run) {
	plots := Plots(run)
	if len(plots) == 0 {
		return
	}
	b.WriteString("## Plots\n\n")
	for _, p := range plots {
		fmt.Fprintf(b, "![%s](%s)\n\n", p.Title, p.File)
	}
}

func txRx(tx, rx string) string { return "Tx:" + tx + "<br>Rx:" + rx }

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// lossText writes a loss with two decimals, but never rounds a loss that
// happened down to none.
func lossText(pct float64) string {
	if pct > 0 && pct < 0.005 {
		return "<0.01"
	}
	return f2(pct)
}

func cpuText(c *CPU) string {
	if c == nil {
		return "–"
	}
	return f2(c.TotalPct)
}

func ratioText(r *float64) string {
	if r == nil {
		return ""
	}
	return f2(*r)
}

func offeredText(kpps float64) string {
	if kpps == 0 {
		return "max"
	}
	return f2(kpps)
}
