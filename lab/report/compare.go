package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Compared is a run and what to call it: its file.
type Compared struct {
	Label string
	Run   *Run
}

// Compare writes runs side by side in Markdown: a table per step of the
// first run, with a row per run that has a step of the same name and
// kind, like the rows per UPF of the published comparisons. Ratios are to
// the first run: Rx packet rates, NDRs, goodput and session rates (higher
// is better), and round-trip times (lower is better).
func Compare(w io.Writer, runs []Compared) error {
	if len(runs) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("# upflab compare\n\n")
	legend := &table{header: []string{"#", "File", "UPF / Date", "Host", "Scenario"}}
	for i, c := range runs {
		legend.add(letter(i), cell(c.Label), upfDate(c.Run), cell(hostText(c.Run.Host)), cell(c.Run.Scenario))
	}
	legend.write(&b)
	otherHosts(&b, runs)
	bpfStatsRuns(&b, runs)
	for _, s := range runs[0].Run.Steps {
		if !s.hasResults() {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", cell(s.Name), cell(s.Setup))
		compareStep(&b, matching(runs, s.Header))
	}
	notInFirst(&b, runs)
	_, err := io.WriteString(w, b.String())
	return err
}

// otherHosts says which runs ran on another host than the first: their
// rates, times and goodput do not compare with its, only their ratios to
// their own reference forwarders do.
func otherHosts(b *strings.Builder, runs []Compared) {
	first := runs[0].Run.Host
	var others []string
	for i, c := range runs[1:] {
		if c.Run.Host != first {
			others = append(others, letter(i+1))
		}
	}
	if len(others) == 0 {
		return
	}
	verb, its := "ran on another host than A", "Its"
	if len(others) > 1 {
		verb, its = "ran on other hosts than A", "Their"
	}
	fmt.Fprintf(b, "**%s %s.** %s rates, round trips, goodput and session rates do not compare with A's; "+
		"the ratios to each run's own reference forwarder (x ref) do, as far as the machines' paths are alike.\n\n",
		strings.Join(others, ", "), verb, its)
}

// bpfStatsRuns says which runs had steps measured while BPF's run-time
// statistics were on: where most rounds of a step were, its ratios are
// drawn toward 1 (upfd's 64 B uplink read 0.61-0.66 without them,
// 0.81-0.82 with, in make lab on the 2-vCPU VM) and compare only with
// others measured so.
func bpfStatsRuns(b *strings.Builder, runs []Compared) {
	var which []string
	for i, c := range runs {
		if steps := bpfStatsSteps(c.Run); steps != "" {
			which = append(which, fmt.Sprintf("%s (step %s)", letter(i), steps))
		}
	}
	if len(which) == 0 {
		return
	}
	fmt.Fprintf(b, "**BPF's run-time statistics were on during %s**, turned on by another process for the whole "+
		"machine: every XDP program run paid two clock reads more. The rounds and trials measured so are left out of a "+
		"step's ratios where they are fewer than half; where they are not, its ratios are drawn toward 1 and compare only "+
		"with others measured so.\n\n",
		strings.Join(which, ", "))
}

// letter is the #-column of run i: A, B, ... Z, AA, AB ...
func letter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return letter(i/26-1) + letter(i%26)
}

// upfDate is the seed's "UPF / Date" cell.
func upfDate(run *Run) string {
	return cell(upfText(run.UPF)) + "<br>" + run.Started.UTC().Format("2006-01-02")
}

// compared is one run's step of a comparison, or nil where it has none.
type compared struct {
	label string // the run's letter
	run   *Run
	step  *Step
}

// matching finds in each run the step of h's name and kind that has
// results.
func matching(runs []Compared, h Header) []compared {
	rows := make([]compared, len(runs))
	for i, c := range runs {
		rows[i] = compared{label: letter(i), run: c.Run}
		for j := range c.Run.Steps {
			if s := &c.Run.Steps[j]; s.Name == h.Name && s.Kind == h.Kind && s.hasResults() {
				rows[i].step = s
			}
		}
	}
	return rows
}

// compareStep writes the tables of one step: rows[0] is the first run's,
// and each kind of result it has writes one (a crash step's are a
// restart's; a step with checks adds its verdicts).
func compareStep(b *strings.Builder, rows []compared) {
	for _, k := range kinds {
		if k.has(rows[0].step) {
			k.compare(b, rows, "x "+rows[0].label)
		}
	}
}

// versus is a figure's ratio to the first run's: of their ratios to their
// own reference forwarders when both have one, which compare across runs
// and hosts; else of the figures themselves, marked with a *, which
// compare only on one host, close in time.
func versus(ratio, firstRatio *float64, v, first float64) string {
	if ratio != nil && firstRatio != nil {
		return ratioText(over(*ratio, *firstRatio, true))
	}
	if r := over(v, first, true); r != nil {
		return f2(*r) + "*"
	}
	return ""
}

// The footnotes of the compared kinds' tables.
const compareRatioNote = "Rx packet rate over the reference forwarder's in the same run (in rounds, or at an NDR's rate found: the median, with the middle half in brackets)."

func versusNote(first string) string {
	return "x " + first + ": x ref over " + first + "'s x ref, the UPF's share of its own machine's path against " + first +
		"'s: the figure that compares across runs and hosts. Marked *: a run without the reference forwarder; its Rx rate over " +
		first + "'s, which compares only on one host, close in time."
}

// over is a figure's ratio to the first run's, if both have it.
func over(v, first float64, ok bool) *float64 {
	if !ok || first == 0 {
		return nil
	}
	r := v / first
	return &r
}

// addRows adds a row per run: label, UPF / date and cells of its step, or
// that it has no such step. The first run always has it.
func addRows(t *table, rows []compared, cells func(s *Step) []string) {
	for _, r := range rows {
		if r.step == nil {
			t.add(append([]string{r.label, upfDate(r.run), "no such step"}, repeat("", len(t.header)-3)...)...)
			continue
		}
		t.add(append([]string{r.label, upfDate(r.run)}, cells(r.step)...)...)
	}
}

// compareBySize gives each size two columns, a figure and its ratio.
func compareBySize(b *strings.Builder, rows []compared, ratio, figure string, values func(*Step) map[int]float64) {
	var sizes []int
	for _, r := range rows {
		if r.step != nil {
			for size := range values(r.step) {
				if !slices.Contains(sizes, size) {
					sizes = append(sizes, size)
				}
			}
		}
	}
	slices.Sort(sizes)
	t := &table{header: []string{"#", "UPF / Date"}}
	if len(sizes) == 0 { // e.g. pings that no size had answered
		t.header = append(t.header, strings.ReplaceAll(figure, "<br>", " "))
		addRows(t, rows, func(*Step) []string { return []string{"none"} })
		t.write(b)
		return
	}
	for _, size := range sizes {
		t.header = append(t.header, fmt.Sprintf("%d B<br>%s", size, figure), "<br>"+ratio)
	}
	first := values(rows[0].step)
	addRows(t, rows, func(s *Step) []string {
		mine := values(s)
		var cells []string
		for _, size := range sizes {
			v, ok := mine[size]
			f, firstOK := first[size]
			if !ok {
				cells = append(cells, "–", "")
				continue
			}
			cells = append(cells, f2(v), ratioText(over(v, f, firstOK)))
		}
		return cells
	})
	t.write(b)
}

// byKey indexes the figures of list that apply.
func byKey[T any, K comparable](list []T, figure func(T) (K, float64, bool)) map[K]float64 {
	out := map[K]float64{}
	for _, x := range list {
		if k, v, ok := figure(x); ok {
			out[k] = v
		}
	}
	return out
}

// notInFirst lists the steps that only later runs have.
func notInFirst(b *strings.Builder, runs []Compared) {
	var extra []string
	for i, c := range runs[1:] {
		for _, s := range c.Run.Steps {
			if s.hasResults() && matching(runs[:1], s.Header)[0].step == nil {
				extra = append(extra, fmt.Sprintf("- %s (%s): %s", letter(i+1), cell(c.Label), cell(s.Name)))
			}
		}
	}
	if len(extra) > 0 {
		fmt.Fprintf(b, "Steps that %s does not have, not compared:\n\n%s\n", letter(0), strings.Join(extra, "\n")+"\n")
	}
}
