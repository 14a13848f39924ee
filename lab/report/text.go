package report

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// WriteText writes the run for a terminal, as `upflab run` prints it: what
// ran where, then a table per kind of step, its columns aligned, without
// the Markdown and HTML of run.md, which keeps the whole (placement,
// trials, plots).
func WriteText(w io.Writer, run *Run) error {
	var b strings.Builder
	took := ""
	if !run.Finished.IsZero() {
		took = ", " + run.Finished.Sub(run.Started).Round(time.Second).String()
	}
	fmt.Fprintf(&b, "upflab run %s, %s%s\n", run.Scenario, run.Started.UTC().Format("2006-01-02 15:04:05 MST"), took)
	fmt.Fprintf(&b, "  host      %s\n", hostText(run.Host))
	fmt.Fprintf(&b, "  UPF       %s\n", upfText(run.UPF))
	fmt.Fprintf(&b, "  sessions  %s\n", sessionsText(run.Sessions))
	if note := bpfStatsNote(run); note != "" {
		fmt.Fprintf(&b, "  note      %s\n", note)
	}
	for _, k := range kinds {
		var section strings.Builder
		k.text(&section, run)
		if section.Len() > 0 {
			fmt.Fprintf(&b, "\n%s\n%s", k.title, section.String())
		}
	}
	var failed strings.Builder
	for i, s := range run.Steps {
		if s.Error != "" {
			fmt.Fprintf(&failed, "  step %d, %s: %s\n", i+1, s.Name, s.Error)
		}
	}
	if failed.Len() > 0 {
		fmt.Fprintf(&b, "\nFailed steps\n%s", failed.String())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeText writes the table for a terminal, indented: columns aligned,
// the first t.left to the left and the rest, figures, to the right; a
// header's <br> starts a second header line, and what follows a cell's
// stands in brackets after it; notes below, one a line.
func (t *table) writeText(b *strings.Builder, notes ...string) {
	lines := 1
	for _, h := range t.header {
		lines = max(lines, len(strings.Split(h, "<br>")))
	}
	head := make([][]string, lines) // the header's lines, bottom-aligned
	for i := range head {
		head[i] = make([]string, len(t.header))
	}
	for c, h := range t.header {
		parts := strings.Split(h, "<br>")
		for i, p := range parts {
			head[lines-len(parts)+i][c] = p
		}
	}
	rows := make([][]string, len(t.rows))
	for i, r := range t.rows {
		for _, v := range r {
			rows[i] = append(rows[i], oneLine(v))
		}
	}
	width := make([]int, len(t.header))
	for _, r := range append(head, rows...) {
		for c, v := range r {
			width[c] = max(width[c], utf8.RuneCountInString(v))
		}
	}
	line := func(cells []string) {
		var l strings.Builder
		l.WriteString(" ")
		for c, v := range cells {
			pad := strings.Repeat(" ", width[c]-utf8.RuneCountInString(v))
			if c < t.left {
				l.WriteString(" " + v + pad)
			} else {
				l.WriteString(" " + pad + v)
			}
			l.WriteString(" ")
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	for _, h := range head {
		line(h)
	}
	for _, r := range rows {
		line(r)
	}
	for _, n := range notes {
		b.WriteString("  " + n + "\n")
	}
}

// oneLine writes a cell of two lines on one: "3000.0<br>1000.0 / 2000.0"
// is "3000.0 (1000.0 / 2000.0)".
func oneLine(cell string) string {
	first, rest, ok := strings.Cut(cell, "<br>")
	if !ok {
		return cell
	}
	return first + " (" + strings.ReplaceAll(rest, "<br>", ", ") + ")"
}

// stepTablesText writes a table for a terminal per step of run that
// tableOf gives rows for, under the step's number, name and setup, and
// below them all the notes, numbered from 1.
func stepTablesText(b *strings.Builder, run *Run, tableOf func(Step) *table, notes ...string) {
	for i, s := range run.Steps {
		if t := tableOf(s); len(t.rows) > 0 {
			fmt.Fprintf(b, "  %d. %s: %s\n", i+1, s.Name, s.Setup)
			t.writeText(b)
		}
	}
	if b.Len() == 0 {
		return
	}
	for i, n := range notes {
		fmt.Fprintf(b, "  [%d] %s\n", i+1, n)
	}
}
