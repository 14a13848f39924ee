package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
)

// kinds are the kinds of step, in the order the docs give them, each with
// its defaults. A kind is a type of Settings in a file of its own
// (churn.go, restart.go, ...); adding one is that file and a line here.
var kinds = []struct {
	name     string
	defaults func() Settings
}{
	{KindThroughput, defaultThroughput},
	{KindNDR, defaultNDR},
	{KindPing, defaultPing},
	{KindCBR, defaultCBR},
	{KindSubscribers, defaultSubscribers},
	{KindChurn, defaultChurn},
	{KindRestart, defaultRestart},
	{KindCrash, defaultCrash},
	{KindIperf, defaultIperf},
	{KindWeb, defaultWeb},
	{KindPolicing, defaultPolicing},
	{KindUsage, defaultUsage},
	{KindIsolation, defaultIsolation},
	{KindOverload, defaultOverload},
	{KindAbuse, defaultAbuse},
	{KindRuleLatency, defaultRuleLatency},
	{KindHandover, defaultHandover},
	{KindBuffering, defaultBuffering},
	{KindChurnUnderTraffic, defaultChurnUnderTraffic},
}

// Kinds lists the step kinds in the order the docs give them.
var Kinds = kindNames()

func kindNames() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// Step is one measurement of a scenario.
type Step struct {
	Kind string // one of Kinds
	// Name is unique in the scenario: reports and `upflab compare` match
	// steps by it. Derived from the step when the file gives none.
	Name string
	// Settings are those of Kind, in its own type: *Throughput for a
	// throughput step, *Restart for a restart step, and so on.
	Settings Settings
}

// Settings are what one kind of step takes: its keys, the rules between
// them, and what it asks of the run. Each kind has a type of its own.
type Settings interface {
	// fields are the keys of the kind, each reading into the settings.
	fields(d *decoder) []field
	// validate checks what a value alone cannot show; path is the
	// step's, e.g. "steps[2]".
	validate(v *validator, path string, s *Scenario)
	// setup says in a few words what the step does, for reports.
	setup() string
	// derivedName names a step the file does not name.
	derivedName() string
	// estimate is the step's sending time at most.
	estimate() time.Duration
	// needs is what the step asks of the run besides its own traffic.
	needs() Needs
}

// Needs are what a step asks of the run besides its own traffic.
type Needs struct {
	// Sessions is how many sessions the step uses at the most: a file
	// without sessions.count gets at least that many.
	Sessions int
	// Reference runs the step also through the reference forwarder, for
	// its ratio to it (see Scenario.Reference).
	Reference bool
	// Restart says that the step restarts the UPF under test: upfd then
	// runs pinned for the whole scenario (see Scenario.Restarts).
	Restart bool
}

// newStep is a step of kind with that kind's defaults, or nil for a kind
// that does not exist.
func newStep(kind string) *Step {
	for _, k := range kinds {
		if k.name == kind {
			return &Step{Kind: kind, Settings: k.defaults()}
		}
	}
	return nil
}

// Direction is which way traffic goes.
type Direction string

// Directions. Both runs uplink, then downlink, each on its own: the way
// the published UPF comparisons measure, so that each direction has its own
// loss and CPU.
const (
	Uplink   Direction = "uplink"   // gNB to DN: GTP-U in on N3, IP out on N6
	Downlink Direction = "downlink" // DN to gNB: IP in on N6, GTP-U out on N3
	Both     Direction = "both"
)

// Each gives the directions to run, in order.
func (d Direction) Each() []Direction {
	if d == Both {
		return []Direction{Uplink, Downlink}
	}
	return []Direction{d}
}

// Setup says in a few words what the step does, for reports.
func (st *Step) Setup() string { return st.Settings.setup() }

// fillNames gives every unnamed step its derived name.
func (s *Scenario) fillNames() {
	for i, st := range s.Steps {
		if st.Name == "" {
			s.Steps[i].Name = st.Settings.derivedName()
		}
	}
}

// Header is what a report says about the step.
func (st *Step) Header() report.Header {
	return report.Header{Name: st.Name, Kind: st.Kind, Setup: st.Setup()}
}

// ComparedToReference says whether the step runs also through the
// reference forwarder (see Scenario.Reference).
func (st *Step) ComparedToReference() bool { return st.needs().Reference }

// needs is what the step asks of the run: nothing when it has no settings,
// as a Step built in code may, which Validate refuses.
func (st *Step) needs() Needs {
	if st.Settings == nil {
		return Needs{}
	}
	return st.Settings.needs()
}

// Estimate is the step's sending time at most.
func (st *Step) Estimate() time.Duration { return st.Settings.estimate() }

func times(n int, d time.Duration) time.Duration { return time.Duration(n) * d }

// sizesText writes a list of numbers as its span: "64-1400", or "64".
func sizesText(list []int) string {
	if len(list) == 0 {
		return ""
	}
	lo, hi := list[0], list[0]
	for _, n := range list {
		lo, hi = min(lo, n), max(hi, n)
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// bytesText adds the unit to a size, unless it is the IMIX.
func bytesText(size string) string {
	if strings.EqualFold(size, "imix") {
		return "imix"
	}
	return size + " B"
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
