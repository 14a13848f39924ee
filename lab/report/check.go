package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Verdict is what a check concluded.
type Verdict string

// The verdicts. Refused is for a UPF that answered the rule the check
// needs with a cause other than Request accepted: it takes no part, which
// is not a failure of what it does do.
const (
	Pass    Verdict = "pass"
	Fail    Verdict = "fail"
	Refused Verdict = "refused"
)

// Check is one line of a scorecard: a figure measured, in Unit, the limit
// it must keep (Min, Max, or both), and the verdict that compares them.
type Check struct {
	Name    string   `json:"name"`
	Figure  float64  `json:"figure"`
	Unit    string   `json:"unit,omitempty"`
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	Verdict Verdict  `json:"verdict"`
	// Note says what the figure is made of, why it failed, or, refused,
	// the UPF's cause.
	Note string `json:"note,omitempty"`
	// Host marks a failure of the lab's host, not of the UPF: it could
	// not make the conditions the check needs (a generator starved of
	// CPU offered too little), so the figure says nothing of the UPF.
	Host bool `json:"host,omitempty"`
}

// Between is a check that figure lies in [lo, hi], in unit.
func Between(name string, figure, lo, hi float64, unit string) Check {
	return judged(Check{Name: name, Figure: figure, Unit: unit, Min: &lo, Max: &hi})
}

// AtMost is a check that figure is hi or less, in unit.
func AtMost(name string, figure, hi float64, unit string) Check {
	return judged(Check{Name: name, Figure: figure, Unit: unit, Max: &hi})
}

// AtLeast is a check that figure is lo or more, in unit.
func AtLeast(name string, figure, lo float64, unit string) Check {
	return judged(Check{Name: name, Figure: figure, Unit: unit, Min: &lo})
}

// RefusedCheck is a check the UPF took no part in: it refused the rule
// the check needs, with cause.
func RefusedCheck(name, cause string) Check {
	return Check{Name: name, Verdict: Refused, Note: cause}
}

// Failed is c failed whatever its figure: what it needed did not happen
// (the control traffic did not arrive, no report came), as why says.
func (c Check) Failed(why string) Check {
	c.Verdict, c.Note = Fail, why
	return c
}

// HostLimited is c failed because the lab's host could not make the
// conditions the check needs, as why says: not the UPF's failure, but no
// pass either.
func (c Check) HostLimited(why string) Check {
	c = c.Failed(why)
	c.Host = true
	return c
}

// With is c with a note on what its figure is made of.
func (c Check) With(note string) Check {
	c.Note = note
	return c
}

// judged sets the verdict of a check from its figure and limit.
func judged(c Check) Check {
	c.Verdict = Pass
	if math.IsNaN(c.Figure) || c.Min != nil && c.Figure < *c.Min || c.Max != nil && c.Figure > *c.Max {
		c.Verdict = Fail
	}
	return c
}

// LimitText is the limit as the scorecard writes it: "98 to 102 %",
// "≤ 0 frames", "≥ 1".
func (c Check) LimitText() string {
	var text string
	switch {
	case c.Verdict == Refused:
		return "–"
	case c.Min != nil && c.Max != nil:
		text = figureText(*c.Min) + " to " + figureText(*c.Max)
	case c.Max != nil:
		text = "≤ " + figureText(*c.Max)
	case c.Min != nil:
		text = "≥ " + figureText(*c.Min)
	default:
		return "–"
	}
	return withUnit(text, c.Unit)
}

// FigureText is the figure with its unit, or a dash for a refused check.
func (c Check) FigureText() string {
	if c.Verdict == Refused || math.IsNaN(c.Figure) {
		return "–"
	}
	return withUnit(figureText(c.Figure), c.Unit)
}

func withUnit(text, unit string) string {
	if unit == "" {
		return text
	}
	return text + " " + unit
}

// figureText writes a figure whole when it is, else with the decimals
// that show it to about four digits.
func figureText(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	decimals := 3 - int(math.Floor(math.Log10(math.Abs(v))))
	return strconv.FormatFloat(v, 'f', min(max(decimals, 1), 6), 64)
}

// verdictText is a verdict as the scorecard writes it: upper case for
// what fails, so that it stands out.
func verdictText(c Check) string {
	switch c.Verdict {
	case Fail:
		return "**FAIL**"
	case Refused:
		return "refused"
	}
	return string(c.Verdict)
}

// AddChecks adds the verdicts of the check step h.
func (r *Run) AddChecks(h Header, checks ...Check) {
	s := r.step(h)
	s.Checks = append(s.Checks, checks...)
}

// Verdicts counts the run's checks by verdict.
func (r *Run) Verdicts() map[Verdict]int {
	n := map[Verdict]int{}
	for _, s := range r.Steps {
		for _, c := range s.Checks {
			n[c.Verdict]++
		}
	}
	return n
}

// hostFailures counts the run's checks that failed for the lab's host.
func hostFailures(run *Run) int {
	n := 0
	for _, s := range run.Steps {
		for _, c := range s.Checks {
			if c.Verdict == Fail && c.Host {
				n++
			}
		}
	}
	return n
}

// checkKind writes the scorecard: every check of the run, in one table.
type checkKind struct{}

func (checkKind) has(s *Step) bool { return len(s.Checks) > 0 }

// checkTable is the scorecard's table: a row per check of the run, in
// Markdown or, for a terminal, plain.
func checkTable(run *Run, markdown bool) *table {
	t := &table{left: 2, header: []string{"#", "Check", "Figure", "Limit", "Verdict", "Note"}}
	for i, s := range run.Steps {
		for _, c := range s.Checks {
			name, verdict, note := cell(c.Name), verdictText(c), cell(c.Note)
			if !markdown {
				name, verdict, note = c.Name, string(c.Verdict), c.Note
			}
			t.add(strconv.Itoa(i+1), name, c.FigureText(), c.LimitText(), verdict, note)
		}
	}
	return t
}

func (checkKind) section(b *strings.Builder, run *Run) {
	t := checkTable(run, true)
	if len(t.rows) == 0 {
		return
	}
	t.write(b)
	b.WriteString(verdictsText(run) + "\n\n")
}

func (checkKind) text(b *strings.Builder, run *Run) {
	t := checkTable(run, false)
	if len(t.rows) == 0 {
		return
	}
	t.writeText(b, verdictsText(run))
}

// verdictsText counts the run's checks by verdict, and the failures the
// lab's host caused.
func verdictsText(run *Run) string {
	n := run.Verdicts()
	text := fmt.Sprintf("%d checks: %d pass, %d fail, %d refused.", n[Pass]+n[Fail]+n[Refused], n[Pass], n[Fail], n[Refused])
	if host := hostFailures(run); host > 0 {
		text += fmt.Sprintf(" %d of the failures are the lab host's: it could not make the conditions the check needs.", host)
	}
	return text
}

// rows are a row per check.
func (checkKind) rows(s Step) []row {
	var rows []row
	for _, c := range s.Checks {
		r := row{"through": "upf", "check": c.Name, "unit": c.Unit, "verdict": string(c.Verdict), "note": c.Note}
		if c.Verdict != Refused {
			r["figure"] = num(c.Figure)
		}
		if c.Min != nil {
			r["min"] = num(*c.Min)
		}
		if c.Max != nil {
			r["max"] = num(*c.Max)
		}
		rows = append(rows, r)
	}
	return rows
}

// compare sets the runs' checks of one step side by side: a row per
// check, each run's figure and verdict in a column of its own, the limit
// the first run's.
func (checkKind) compare(b *strings.Builder, rows []compared, _ string) {
	t := &table{header: []string{"Check", "Limit"}}
	for _, r := range rows {
		t.header = append(t.header, r.label+": "+cell(upfText(r.run.UPF)))
	}
	for _, name := range checkNames(rows) {
		first, _ := checkNamed(rows[0].step, name)
		line := []string{cell(name), first.LimitText()}
		for _, r := range rows {
			c, ok := checkNamed(r.step, name)
			if !ok {
				line = append(line, "–")
				continue
			}
			line = append(line, c.FigureText()+" "+verdictText(c))
		}
		t.add(line...)
	}
	t.write(b)
}

// checkNames are the checks of every run's step, in the order they first
// come.
func checkNames(rows []compared) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range rows {
		if r.step == nil {
			continue
		}
		for _, c := range r.step.Checks {
			if !seen[c.Name] {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
	}
	return names
}

// checkNamed is the check of s called name.
func checkNamed(s *Step, name string) (Check, bool) {
	if s == nil {
		return Check{}, false
	}
	for _, c := range s.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}
