package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Search is a non-drop (or partial-drop) rate search in one direction.
type Search struct {
	Direction        string  `json:"direction"`
	Size             string  `json:"size"`
	LossTolerancePct float64 `json:"loss_tolerance_pct"`
	Found            bool    `json:"found"` // a rate passed, and held
	// Result is the rate found: of its trials (the first that passed at
	// it and those that confirmed it), the one of median Rx rate.
	Result    Measurement `json:"result"`
	Trials    []Trial     `json:"trials"`
	Reference *Search     `json:"reference,omitempty"`
	// RatioToReference is the median of the ratios of the Rx rates of the
	// trials at the rates found, the UPF's first over the reference's
	// first and so on, and RatioSpread their quartiles.
	RatioToReference *float64 `json:"ratio_to_reference,omitempty"`
	RatioSpread      *Spread  `json:"ratio_spread,omitempty"`
}

// Trial is one rate the search tried.
type Trial struct {
	Measurement
	Passed bool `json:"passed"` // loss within the tolerance
	// Final marks the trials at the rate found: the first to pass there,
	// and those that confirmed it.
	Final bool `json:"final,omitempty"`
}

// NewSearch makes a search's result from its trials, in the order run;
// those marked Final are at the rate found.
func NewSearch(direction, size string, lossTolerancePct float64, trials []Trial) Search {
	s := Search{Direction: direction, Size: size, LossTolerancePct: lossTolerancePct, Trials: trials}
	final := s.final()
	if len(final) == 0 {
		return s
	}
	slices.SortStableFunc(final, func(a, b Trial) int { return cmp.Compare(a.RxKpps, b.RxKpps) })
	s.Found, s.Result = true, final[(len(final)-1)/2].Measurement
	return s
}

// final are the trials at the rate found, in the order run.
func (s Search) final() []Trial {
	var out []Trial
	for _, t := range s.Trials {
		if t.Final {
			out = append(out, t)
		}
	}
	return out
}

// ndrKind writes a search per direction: its result, beside the reference
// forwarder's, and its trials.
type ndrKind struct{}

func (ndrKind) has(s *Step) bool { return len(s.NDR) > 0 }

// AddNDR adds searches, one per direction, to the step h.
func (r *Run) AddNDR(h Header, searches ...Search) {
	s := r.step(h)
	for _, search := range searches {
		if ref := search.Reference; ref != nil && ref.Found && search.Found {
			a, b := search.final(), ref.final()
			var rxA, rxB []float64
			var stats []bool
			for i := range min(len(a), len(b)) {
				rxA, rxB = append(rxA, a[i].RxKpps), append(rxB, b[i].RxKpps)
				stats = append(stats, a[i].BPFStats || b[i].BPFStats)
			}
			search.RatioToReference, search.RatioSpread = medianRatio(clearPairs(rxA, rxB, stats))
		}
		s.NDR = append(s.NDR, search)
	}
}

func (ndrKind) section(b *strings.Builder, run *Run) {
	t := &table{header: []string{"#", "Step", "Direction", "Rate<br>Gbps", "<br>Kpps", "<br>Loss %", "<br>CPU %[1]", "<br>x ref[2]", "Trials"}}
	var details strings.Builder
	for i, s := range run.Steps {
		for _, search := range s.NDR {
			t.add(append([]string{strconv.Itoa(i + 1), stepCell(s.Header), search.Direction},
				searchCells(search, RatioText(search.RatioToReference, search.RatioSpread))...)...)
			trialDetails(&details, s.Name, "", search)
			if ref := search.Reference; ref != nil {
				t.add(append([]string{"", "↳ reference forwarder", ref.Direction}, searchCells(*ref, "")...)...)
				trialDetails(&details, s.Name, ", reference forwarder", *ref)
			}
		}
	}
	if len(t.rows) == 0 {
		return
	}
	t.write(b)
	fmt.Fprintf(b, "1. %s\n2. %s\n\n%s", cpuNote, ratioNote, details.String())
}

// text gives each step a row of NDRs and ratios, and the reference
// forwarder's below.
func (ndrKind) text(b *strings.Builder, run *Run) {
	t := &table{left: 2, header: []string{"#", "Step", "Uplink NDR<br>Rx kpps", "<br>x ref", "Downlink NDR<br>Rx kpps", "<br>x ref"}}
	for i, s := range run.Steps {
		if len(s.NDR) == 0 {
			continue
		}
		var refs []Search
		var cells []string
		for _, dir := range []string{"uplink", "downlink"} {
			x := bySearchDirection(s.NDR, dir)
			if x == nil {
				cells = append(cells, "–", "")
				continue
			}
			cells = append(cells, ndrText(*x), RatioText(x.RatioToReference, x.RatioSpread))
			if x.Reference != nil {
				refs = append(refs, *x.Reference)
			}
		}
		t.add(append([]string{strconv.Itoa(i + 1), s.Name}, cells...)...)
		if len(refs) > 0 {
			var cells []string
			for _, dir := range []string{"uplink", "downlink"} {
				if x := bySearchDirection(refs, dir); x != nil {
					cells = append(cells, ndrText(*x), "")
				} else {
					cells = append(cells, "–", "")
				}
			}
			t.add(append([]string{"", "  reference forwarder"}, cells...)...)
		}
	}
	if len(t.rows) > 0 {
		t.writeText(b, "NDR: the highest rate without loss that held in every trial at it (RFC 2544); the trials are in run.md.", textRatioNote)
	}
}

// ndrText is a search's NDR, or that none held.
func ndrText(s Search) string {
	if !s.Found {
		return "none held"
	}
	return f1(s.Result.RxKpps)
}

// plots draw each direction's trials in turn, what was sent and what
// arrived, the reference forwarder's dashed beside the UPF's: where the
// two lines part, frames were lost.
func (ndrKind) plots(s Step, file func(string) string) []Plot {
	var charts []chart
	for _, search := range s.NDR {
		var lines []series
		for _, x := range []struct {
			s      *Search
			who    string
			dashed bool
		}{{&search, "", false}, {search.Reference, ", reference forwarder", true}} {
			if x.s == nil {
				continue
			}
			var sent, received []point
			for i, t := range x.s.Trials {
				sent, received = append(sent, point{float64(i + 1), t.TxKpps / 1e3}), append(received, point{float64(i + 1), t.RxKpps / 1e3})
			}
			lines = append(lines, series{name: "sent" + x.who, points: sent, color: 2, dashed: x.dashed},
				series{name: "received" + x.who, points: received, dashed: x.dashed})
		}
		charts = append(charts, chart{title: fmt.Sprintf("NDR trials, %s: %s", search.Direction, s.Name),
			xLabel: "trial", yLabel: "Mpps", series: lines})
	}
	return []Plot{{File: file("trials"), Title: "Non-drop rate trials: " + s.Name, charts: charts}}
}

// searchCells are a search's result cells: the rate found.
func searchCells(s Search, ratio string) []string {
	trials := strconv.Itoa(len(s.Trials))
	if !s.Found {
		return append(repeat("–", 5), trials+", none held")
	}
	m := s.Result
	return []string{txRx(f2(m.TxGbps), f2(m.RxGbps)), txRx(f2(m.TxKpps), f2(m.RxKpps)),
		lossText(m.LossPct), cpuText(m.CPU), ratio, fmt.Sprintf("%s, %d at the rate found", trials, len(s.final()))}
}

// trialDetails lists a search's trials in a fold, as the seed keeps its
// logs.
func trialDetails(b *strings.Builder, step, through string, s Search) {
	t := &table{header: []string{"Trial", "Offered<br>Kpps", "Tx<br>Kpps", "Rx<br>Kpps", "Loss %", "Result"}}
	for i, tr := range s.Trials {
		t.add(strconv.Itoa(i+1), offeredText(tr.OfferedKpps), f2(tr.TxKpps), f2(tr.RxKpps), lossText(tr.LossPct), trialResult(tr))
	}
	fmt.Fprintf(b, "<details><summary>Trials of %s, %s%s (loss tolerance %s %%)</summary>\n\n",
		cell(step), s.Direction, through, strconv.FormatFloat(s.LossTolerancePct, 'f', -1, 64))
	t.write(b)
	b.WriteString("</details>\n\n")
}

// trialResult says whether a trial passed, and whether at the rate found.
func trialResult(t Trial) string {
	switch {
	case t.Final:
		return "pass, rate found"
	case t.Passed:
		return "pass"
	}
	return "fail"
}

// searchRows are a search's trials and then its result.
func searchRows(s Search, through string) []row {
	var rows []row
	for i, t := range s.Trials {
		rows = append(rows, measurementRow(t.Measurement, through,
			row{"trial": strconv.Itoa(i + 1), "passed": strconv.FormatBool(t.Passed), "final": strconv.FormatBool(t.Final)}))
	}
	result := measurementRow(s.Result, through, row{"passed": strconv.FormatBool(s.Found)})
	result["direction"], result["size"] = s.Direction, s.Size
	ratioColumns(result, s.RatioToReference, s.RatioSpread)
	return append(rows, result)
}

func (ndrKind) rows(s Step) []row {
	var rows []row
	for _, search := range s.NDR {
		rows = append(rows, searchRows(search, "upf")...)
		if search.Reference != nil {
			rows = append(rows, searchRows(*search.Reference, "reference")...)
		}
	}
	return rows
}

// compare sets each run's NDR and ratio to its own reference side by
// side, and that ratio over the first run's.
func (ndrKind) compare(b *strings.Builder, rows []compared, ratio string) {
	t := &table{header: []string{"#", "UPF / Date"}}
	for _, dir := range []string{"UpLink", "DownLink"} {
		t.header = append(t.header, dir+" NDR<br>Rx Kpps", "<br>x ref[1]", "<br>"+ratio+"[2]")
	}
	first := rows[0].step.NDR
	addRows(t, rows, func(s *Step) []string {
		return append(ndrCells(s.NDR, "uplink", first), ndrCells(s.NDR, "downlink", first)...)
	})
	t.write(b)
	fmt.Fprintf(b, "1. %s\n2. %s\n\n", compareRatioNote, versusNote(rows[0].label))
}

// ndrCells are one direction's NDR (Rx), its ratio to its reference, and
// that over the first run's.
func ndrCells(searches []Search, direction string, first []Search) []string {
	s := bySearchDirection(searches, direction)
	switch {
	case s == nil:
		return repeat("–", 3)
	case !s.Found:
		return []string{"none held", "", ""}
	}
	cells := []string{f2(s.Result.RxKpps), RatioText(s.RatioToReference, s.RatioSpread), ""}
	if f := bySearchDirection(first, direction); f != nil && f.Found {
		cells[2] = versus(s.RatioToReference, f.RatioToReference, s.Result.RxKpps, f.Result.RxKpps)
	}
	return cells
}

func bySearchDirection(searches []Search, direction string) *Search {
	i := slices.IndexFunc(searches, func(s Search) bool { return s.Direction == direction })
	if i < 0 {
		return nil
	}
	return &searches[i]
}
