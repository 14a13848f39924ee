// Package scenario reads the lab's scenario files: which topology to build,
// which UPF to put in it, how many sessions to establish, which traffic
// steps to run, and where the results go. docs/lab.md describes every key.
//
// Absent keys take defaults; a step takes the defaults of its kind. Every
// error names the file, the line and the key, and says what to write
// instead, in one line:
//
//	scenario.yaml:12: steps[2].rate: "fast" is not a rate; want e.g. 1Mpps, 500kpps, 2Gbps or "max"
//
// Unknown keys, keys of another step kind, repeated keys, aliases and a
// second YAML document are refused. Of several problems the first in the
// file is reported: syntax, then keys and values in file order, then the
// rules that tie values together (Validate).
package scenario

import (
	_ "embed"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/smf"
)

// Scenario is one lab run.
type Scenario struct {
	Name     string // name: reports and the output directory carry it
	Topology Topology
	UPF      UPF
	// Reference measures every throughput, ndr and subscribers step also
	// through the reference forwarder, in the same run, for the ratio.
	// The probes (ping, cbr) need a UPF that decapsulates, and churn needs
	// PFCP: they run against the UPF under test only.
	Reference bool
	Sessions  Sessions
	Steps     []Step
	Outputs   Outputs

	src *source // where keys are in the file; nil for a Scenario built in code
}

// Topology is the lab's namespaces and links (lab/topo).
type Topology struct {
	Name   string // topology.name: prefix of the namespaces
	N9     bool   // topology.n9: add a second UPF namespace on N9
	Queues int    // topology.queues: queues of each veth, one per core used
}

// The kinds of UPF under test.
const (
	UPFBuiltIn   = "upfd"      // the built-in UPF, with optional config overrides
	UPFReference = "reference" // the reference forwarder: the ceiling itself
	UPFCommand   = "command"   // any UPF, started from a command line
)

// UPF is the UPF under test.
type UPF struct {
	Kind string // upf.kind: UPFBuiltIn, UPFReference or UPFCommand
	// Command is the command line of a UPFCommand, run by /bin/sh in the
	// UPF's namespace after its placeholders are filled (see Bindings).
	Command string
	// Config, for UPFBuiltIn, is YAML in upfd.yaml's format whose keys
	// override the defaults (which fit the lab); for UPFCommand, the text
	// of the file that {config} names, before ConfigText fills its
	// placeholders. Nil when there is none.
	Config []byte
	// Name and Version say what reports call the UPF; Name defaults to
	// the kind, or the command's program.
	Name, Version string
	// Startup is how long the lab waits for the UPF to answer PFCP.
	Startup time.Duration
}

// Sessions are what the SMF emulator establishes before the steps.
type Sessions struct {
	Count   int         // sessions.count; by default 1000, or what the steps need if more
	Profile smf.Profile // sessions.profile
	Flows   int         // sessions.flows: distinct 5-tuples per session
}

// MaxSessions bounds sessions.count: what the lab's datapath benchmarks
// have run with, and fewer than the lab's UE pools number (topo.UESlots).
const MaxSessions = 1_000_000

// MaxFlows bounds sessions.count × sessions.flows, as upflab gen's: the
// sink keeps a window per flow.
const MaxFlows = 1 << 20

// Outputs are where results go and in which formats.
type Outputs struct {
	// Directory may hold {name} and {time}; see Dir.
	Directory string
	Formats   []string // of report.Formats
}

// Dir is the output directory of a run started at t: {name} becomes the
// scenario's name and {time} the start in local time, 20060102-150405.
func (o Outputs) Dir(name string, t time.Time) string {
	return strings.NewReplacer("{name}", name, "{time}", t.Format("20060102-150405")).Replace(o.Directory)
}

//go:embed default.yaml
var defaultYAML []byte

// DefaultFile is the name errors give the embedded default scenario.
const DefaultFile = "default.yaml"

// DefaultYAML is the text of the default scenario, for `upflab run` to show.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Default is the scenario `upflab run` runs without a file.
func Default() *Scenario {
	s, err := Parse(DefaultFile, defaultYAML)
	if err != nil {
		panic("scenario: the embedded default does not parse: " + err.Error())
	}
	return s
}

// Load reads and validates the scenario file at path.
func Load(path string) (*Scenario, error) {
	data, err := yamlfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes data, the contents of the file called name, fills in the
// defaults and validates the result. Errors are *Error.
func Parse(name string, data []byte) (*Scenario, error) {
	s := defaults()
	s.Name = nameOf(name)
	s.src = &source{file: name, lines: map[string]int{}}
	if err := decode(s, data); err != nil {
		return nil, err
	}
	s.fillNames()
	if s.src.line("sessions.count") == 0 {
		s.Sessions.Count = max(s.Sessions.Count, s.sessionsNeeded())
	}
	if s.UPF.Name == "" {
		s.UPF.Name = defaultUPFName(s.UPF)
	}
	// The reference forwarder is measured against itself only when asked.
	if s.src.line("reference") == 0 && s.UPF.Kind == UPFReference {
		s.Reference = false
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// sessionsNeeded is the most sessions a step needs (Needs.Sessions): its
// largest subscriber count, or the sessions it churns each second.
func (s *Scenario) sessionsNeeded() int {
	most := 0
	for _, st := range s.Steps {
		most = max(most, st.needs().Sessions)
	}
	return most
}

// nameOf is the scenario name a file gives when it sets none: its base
// name without extension, if that makes a name.
func nameOf(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if _, err := parseName(64)(base); err != nil {
		return "scenario"
	}
	return base
}

// defaults is a scenario before the file: everything but the steps.
func defaults() *Scenario {
	return &Scenario{
		Topology:  Topology{Name: "upflab", Queues: 1},
		UPF:       UPF{Kind: UPFBuiltIn, Startup: 10 * time.Second},
		Reference: true,
		Sessions:  Sessions{Count: 1000, Profile: smf.Plain, Flows: 1},
		Outputs: Outputs{
			Directory: "upflab-results/{name}-{time}",
			Formats:   append([]string(nil), report.Formats...),
		},
	}
}

// MeasuresReference says whether the run measures the reference forwarder
// beside the UPF under test (which may be the reference forwarder too:
// the lab's noise floor).
func (s *Scenario) MeasuresReference() bool { return s.Reference }

// Estimate is the traffic time of the whole scenario at most: every step's
// sending time, twice for the steps also run through the reference. Setup
// and teardown add a few seconds.
func (s *Scenario) Estimate() time.Duration {
	var total time.Duration
	for _, st := range s.Steps {
		d := st.Estimate()
		if st.ComparedToReference() && s.MeasuresReference() {
			d *= 2
		}
		total += d
	}
	return total
}

// Error is a problem found in a scenario file: its File, Line (0 when the
// problem is with a default), Key (e.g. "steps[2].rate"; "" for a syntax
// error) and Msg, what is wrong and what to write instead.
type Error = yamlfile.Error

// source remembers where a parsed Scenario came from. The decoder records
// into lines through a yamlfile.Source that shares the map.
type source struct {
	file  string
	lines map[string]int // key path, e.g. "steps[2].rate", to its 1-based line
}

// line is where path is in the file, or 0 if the file does not set it.
func (s *source) line(path string) int {
	if s == nil {
		return 0
	}
	return s.lines[path]
}

func (s *source) name() string {
	if s == nil {
		return ""
	}
	return s.file
}
