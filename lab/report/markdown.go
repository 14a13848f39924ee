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
	if note := bpfStatsNote(run); note != "" {
		fmt.Fprintf(&b, "**Note:** %s\n\n", note)
	}
	if len(run.Placement) > 0 {
		placementTable(run.Placement).write(&b)
	}
	for _, k := range kinds {
		var section strings.Builder
		k.section(&section, run)
		if section.Len() > 0 {
			fmt.Fprintf(&b, "## %s\n\n%s", k.title, section.String())
		}
	}
	failedSection(&b, run)
	if withPlots {
		plotSection(&b, run)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// table is a table under construction, for Markdown (write) or a
// terminal (writeText).
type table struct {
	header []string
	rows   [][]string
	left   int // in a terminal, columns aligned to the left, from the first
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
	t.add("Sessions", sessionsText(run.Sessions))
	return t
}

func sessionsText(s Sessions) string {
	text := fmt.Sprintf("%d (%s, %d flow%s each)", s.Count, s.Profile, s.Flows, plural(s.Flows))
	if s.PerSecond > 0 {
		text += fmt.Sprintf(", established at %.0f/s", s.PerSecond)
	}
	return text
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
	ratioNote = "Rx packet rate over the reference forwarder's, measured in the same run under the same load. " +
		"Measured in rounds (or an NDR's trials at the rate found), the median of the rounds' ratios, each to the reference forwarder's round beside it, " +
		"and in brackets the middle half of them (first to third quartile)."
	// coreNote is for the steps on one core, whose rates are per second
	// of the core's time.
	coreNote = "On 1 core (the closed loop) rates are per second of the time the core gave the traffic, " +
		"which leaves out what other processes took of it meanwhile."
)

func stepCell(h Header) string {
	return cell(h.Name) + "<br>" + cell(h.Setup)
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

// stepTables writes a Markdown table per step of run that tableOf gives
// rows for, under the step's number, name and setup, and below them all
// the notes, numbered from 1: stepTablesText's Markdown.
func stepTables(b *strings.Builder, run *Run, tableOf func(Step) *table, notes ...string) {
	for i, s := range run.Steps {
		if t := tableOf(s); len(t.rows) > 0 {
			fmt.Fprintf(b, "**%d. %s**: %s\n\n", i+1, cell(s.Name), cell(s.Setup))
			t.write(b)
		}
	}
	if b.Len() == 0 {
		return
	}
	for i, n := range notes {
		fmt.Fprintf(b, "%d. %s\n", i+1, n)
	}
	b.WriteString("\n")
}
