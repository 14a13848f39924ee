package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

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

// ndrKind writes a search per direction: its result, beside the reference
// forwarder's, and its trials.
type ndrKind struct{}

func (ndrKind) has(s *Step) bool { return len(s.NDR) > 0 }

// AddNDR adds searches, one per direction, to the step h.
func (r *Run) AddNDR(h Header, searches ...Search) {
	s := r.step(h)
	for _, search := range searches {
		if ref := search.Reference; ref != nil && ref.Found {
			search.RatioToReference = packetRatio(search.Result, &ref.Result)
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

// searchRows are a search's trials and then its result.
func searchRows(s Search, through string) []row {
	var rows []row
	for i, t := range s.Trials {
		rows = append(rows, measurementRow(t.Measurement, through,
			row{"trial": strconv.Itoa(i + 1), "passed": strconv.FormatBool(t.Passed)}))
	}
	result := measurementRow(s.Result, through, row{"passed": strconv.FormatBool(s.Found)})
	result["direction"], result["size"] = s.Direction, s.Size
	if s.RatioToReference != nil {
		result["ratio_to_reference"] = num(*s.RatioToReference)
	}
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

func (ndrKind) compare(b *strings.Builder, rows []compared, ratio string) {
	t := &table{header: []string{"#", "UPF / Date", "UpLink NDR<br>Gbps", "<br>Kpps", "<br>" + ratio,
		"DownLink NDR<br>Gbps", "<br>Kpps", "<br>" + ratio}}
	first := byKey(rows[0].step.NDR, func(x Search) (string, float64, bool) { return x.Direction, x.Result.RxKpps, x.Found })
	addRows(t, rows, func(s *Step) []string {
		return append(ndrCells(s.NDR, "uplink", first), ndrCells(s.NDR, "downlink", first)...)
	})
	t.write(b)
}

// ndrCells are one direction's NDR in Gbps and Kpps (Rx) and its ratio.
func ndrCells(searches []Search, direction string, first map[string]float64) []string {
	i := slices.IndexFunc(searches, func(s Search) bool { return s.Direction == direction })
	switch {
	case i < 0:
		return repeat("–", 3)
	case !searches[i].Found:
		return []string{"none passed", "", ""}
	}
	m := searches[i].Result
	f, ok := first[direction]
	return []string{f2(m.RxGbps), f2(m.RxKpps), ratioText(over(m.RxKpps, f, ok))}
}
