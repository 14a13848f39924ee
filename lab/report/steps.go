package report

import "strings"

// Header says which step a result belongs to.
type Header struct {
	Name  string `json:"name"`  // unique in the run; Compare matches steps by it
	Kind  string `json:"kind"`  // throughput, ndr, ping, cbr, subscribers, churn, restart, iperf, web, or a check's
	Setup string `json:"setup"` // what the step did, in a few words
}

// Step is the results of one step; the field of its kind is set, or
// Error when the step failed.
type Step struct {
	Header
	Error       string           `json:"error,omitempty"`
	Throughput  []Measurement    `json:"throughput,omitempty"`
	NDR         []Search         `json:"ndr,omitempty"`
	Ping        []Ping           `json:"ping,omitempty"`
	CBR         []CBR            `json:"cbr,omitempty"`
	Subscribers []SubscriberLoad `json:"subscribers,omitempty"`
	Churn       *Churn           `json:"churn,omitempty"`
	Restart     *Restart         `json:"restart,omitempty"`
	Iperf       []Iperf          `json:"iperf,omitempty"`
	Web         []WebLoad        `json:"web,omitempty"`
	Checks      []Check          `json:"checks,omitempty"` // a check's verdicts: the scorecard
}

// kinds are the kinds of step, in the order reports give them: each by
// the name its Header gives, with the title of its Markdown section. A
// kind is a type in a file of its own (churn.go, restart.go, ...) with a
// field of Step for its results; adding one is those and a line here (and
// its columns in csvColumns, if it has its own).
var kinds = []struct {
	name, title string
	kind
}{
	{"throughput", "Throughput", throughputKind{}},
	{"ndr", "Non-drop rate", ndrKind{}},
	{"ping", "Round-trip time", pingKind{}},
	{"cbr", "Constant bit rate", cbrKind{}},
	{"subscribers", "Subscribers", subscribersKind{}},
	{"churn", "Session churn", churnKind{}},
	{"restart", "Restart under traffic", restartKind{}},
	{"iperf", "iperf3 from real UEs", iperfKind{}},
	{"web", "Subscribers with real connections", webKind{}},
	{"check", "Scorecard", checkKind{}},
}

// A kind writes the results of one kind of step: in the Markdown
// summary, in the CSV, and side by side in a comparison.
type kind interface {
	// has says whether s holds results of the kind.
	has(s *Step) bool
	// section writes the Markdown of the kind's steps in run, or nothing
	// when none has results.
	section(b *strings.Builder, run *Run)
	// text writes the same for a terminal (WriteText): its tables
	// aligned, the few columns that matter most, or nothing.
	text(b *strings.Builder, run *Run)
	// rows are the CSV rows of s's results of the kind.
	rows(s Step) []row
	// compare writes the table of one step across runs: rows[0] is the
	// first run's, which has results; ratio heads the ratios to it.
	compare(b *strings.Builder, rows []compared, ratio string)
}

// A plottedKind draws its steps' results, too.
type plottedKind interface {
	// plots are s's plots; file names each after what it draws.
	plots(s Step, file func(what string) string) []Plot
}

// hasResults says whether a step has results to compare.
func (s *Step) hasResults() bool {
	if s.Error != "" {
		return false
	}
	for _, k := range kinds {
		if k.has(s) {
			return true
		}
	}
	return false
}
