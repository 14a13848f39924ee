package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// example is the file docs/lab.md shows: a command UPF against the
// reference forwarder, every key set, every kind of step.
const example = `# eupf.yaml: eUPF measured like upfd, beside the reference forwarder.
name: eupf
topology:
  name: upflab            # namespaces upflab-smf, upflab-gnb, upflab-upf, upflab-dn
  n9: false               # true adds upflab-upf2 behind N9
  queues: 2               # queues per veth: one per core that takes traffic
upf:
  kind: command           # upfd | reference | command
  name: eUPF              # what reports call it
  version: v0.6.4
  command: eupf --config {config}
  config: |               # written to the file {config} names; placeholders filled
    interface_name: [{n3}, {n6}]
    xdp_attach_mode: native
    pfcp_address: {n4_addr}:8805
    pfcp_node_id: {n4_addr}
    n3_address: {n3_addr}
  startup: 20s            # how long to wait for it to answer PFCP
reference: true           # every throughput figure also through the reference forwarder
sessions:
  count: 2000
  profile: open5gs        # plain | open5gs | free5gc
  flows: 4                # 5-tuples per session
steps:
  - kind: throughput
    name: uplink 1400 B
    direction: uplink     # uplink | downlink | both (one after the other)
    size: 1400            # payload bytes, or imix
    rate: max             # max, or e.g. 500kpps, 2Gbps
    duration: 10s
    cores: 1              # 1: the closed loop, on one core | all
    rounds: 20            # in turn with the reference forwarder's
  - kind: ndr
    name: pdr 64 B
    direction: both
    size: 64
    loss_tolerance: 0.5%  # 0% for the NDR
    resolution: 5kpps
    max_iterations: 12
    trial: 2s
    max_rate: 3Mpps
    cores: all
    confirm: 3            # trials more the rate found must pass
  - kind: ping
    sizes: [16, 64, 256, 512, 1024, 1400]
    count: 1000
    interval: 0           # the next as soon as the answer is in, as oping -i 0
  - kind: cbr
    sizes: [64, 256, 512, 1024, 1400]
    rate: flood
    duration: 2s
  - kind: subscribers
    counts: [100, 500, 1000, 2000]
    duration: 30s
    uplink:               # per subscriber: seed 003's model
      - {protocol: tcp, rate: 1522.2kbps, pps: 247}
      - {protocol: udp, rate: 567.2kbps, pps: 175}
    downlink:
      - {protocol: tcp, rate: 2331.6kbps, pps: 321}
      - {protocol: udp, rate: 1617.2kbps, pps: 375}
  - kind: churn
    per_second: 200
    duration: 10s
outputs:
  directory: results/{name}-{time}
  formats: [json, csv, md, png]
`

// upfdExample is docs/lab.md's example of upfd with config overrides.
const upfdExample = `name: many-sessions
upf:
  kind: upfd
  config:                 # upfd.yaml keys over the lab's defaults
    max_sessions: 1000000
    xdp_mode: native
sessions:
  count: 1000000
steps:
  - {kind: throughput, direction: both, size: 64}
`

// keys is every key a file may set, as errors name them.
var keys = []string{
	"name", "topology", "topology.name", "topology.n9", "topology.queues",
	"upf", "upf.kind", "upf.name", "upf.version", "upf.command", "upf.config", "upf.startup",
	"reference", "sessions", "sessions.count", "sessions.profile", "sessions.flows",
	"steps", "steps[].kind", "steps[].name",
	"steps[].direction", "steps[].size", "steps[].rate", "steps[].duration",
	"steps[].cores", "steps[].rounds",
	"steps[].loss_tolerance", "steps[].resolution", "steps[].max_iterations", "steps[].trial", "steps[].max_rate", "steps[].confirm",
	"steps[].sizes", "steps[].count", "steps[].interval",
	"steps[].counts", "steps[].uplink", "steps[].downlink",
	"steps[].uplink[].protocol", "steps[].uplink[].rate", "steps[].uplink[].pps",
	"steps[].per_second", "steps[].at", "steps[].mode",
	"steps[].ues", "steps[].streams", "steps[].protocols", "steps[].udp_rate", "steps[].mbr", "steps[].ceiling",
	"outputs", "outputs.directory", "outputs.formats",
}

func mustParse(t *testing.T, text string) *Scenario {
	t.Helper()
	s, err := Parse("scenario.yaml", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

func TestParseExample(t *testing.T) {
	s := mustParse(t, example)
	want := &Scenario{
		Name:     "eupf",
		Topology: Topology{Name: "upflab", Queues: 2},
		UPF: UPF{Kind: UPFCommand, Name: "eUPF", Version: "v0.6.4", Command: "eupf --config {config}",
			Config: []byte("interface_name: [{n3}, {n6}]\nxdp_attach_mode: native\npfcp_address: {n4_addr}:8805\n" +
				"pfcp_node_id: {n4_addr}\nn3_address: {n3_addr}\n"),
			Startup: 20 * time.Second},
		Reference: true,
		Sessions:  Sessions{Count: 2000, Profile: "open5gs", Flows: 4},
		Steps: []Step{
			{Kind: KindThroughput, Name: "uplink 1400 B", Settings: &Throughput{
				Direction: Uplink, Size: Size{Bytes: 1400}, Rate: Rate{Max: true}, Duration: 10 * time.Second, Cores: OneCore, Rounds: 20}},
			{Kind: KindNDR, Name: "pdr 64 B", Settings: &NDR{Direction: Both, Size: Size{Bytes: 64}, LossTolerance: 0.5,
				Resolution: Rate{PPS: 5000}, MaxIterations: 12, Trial: 2 * time.Second, MaxRate: Rate{PPS: 3e6}, Confirm: 3}},
			{Kind: KindPing, Name: "ping 16-1400 B", Settings: &Ping{Sizes: []int{16, 64, 256, 512, 1024, 1400}, Count: 1000, Mode: PingProbe}},
			{Kind: KindCBR, Name: "cbr 64-1400 B max", Settings: &CBR{Sizes: []int{64, 256, 512, 1024, 1400},
				Rate: Rate{Max: true}, Duration: 2 * time.Second}},
			{Kind: KindSubscribers, Name: "subscribers 100-2000", Settings: &Subscribers{
				Counts: []int{100, 500, 1000, 2000}, Duration: 30 * time.Second, Uplink: SeedUplink, Downlink: SeedDownlink}},
			{Kind: KindChurn, Name: "churn 200/s", Settings: &Churn{PerSecond: 200, Duration: 10 * time.Second}},
		},
		Outputs: Outputs{Directory: "results/{name}-{time}", Formats: []string{"json", "csv", "md", "png"}},
	}
	s.src = nil
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %+v\nwant %+v", s, want)
		for i := range min(len(s.Steps), len(want.Steps)) {
			if !reflect.DeepEqual(s.Steps[i], want.Steps[i]) {
				t.Errorf("steps[%d]: got %+v", i, s.Steps[i].Settings)
			}
		}
	}
}

// TestExamplesSetEveryKey keeps the documented examples complete: a key
// added to the package must be added to one of them.
func TestExamplesSetEveryKey(t *testing.T) {
	var lines []map[string]int
	for _, text := range []string{example, upfdExample, shipped(t, "restart.yaml"), shipped(t, "iperf3.yaml"), shipped(t, "web.yaml"),
		shipped(t, "verify.yaml")} {
		lines = append(lines, mustParse(t, text).src.lines)
	}
	for _, key := range keys {
		found := false
		for _, l := range lines {
			for path := range l {
				if keyPattern(path) == key {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("no example sets %s", key)
		}
	}
}

// keyPattern writes a key path as keys lists it: items as [].
func keyPattern(path string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(path, '[')
		if open < 0 {
			return b.String() + path
		}
		b.WriteString(path[:open] + "[]")
		path = path[open+strings.IndexByte(path[open:], ']')+1:]
	}
}

// TestDocumented checks that docs/lab.md shows the examples and the
// default as they are and describes every key.
func TestDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/lab.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"example": example, "upfdExample": upfdExample, "default.yaml": string(defaultYAML),
		"restart.yaml": shipped(t, "restart.yaml"), "command.yaml": shipped(t, "command.yaml"), "iperf3.yaml": shipped(t, "iperf3.yaml"),
		"web.yaml": shipped(t, "web.yaml"), "verify.yaml": shipped(t, "verify.yaml")} {
		if !strings.Contains(string(doc), "```yaml\n"+text+"```\n") {
			t.Errorf("docs/lab.md does not show %s as it is; copy it over", name)
		}
	}
	for _, key := range keys {
		if !strings.Contains(string(doc), "| `"+key+"` |") {
			t.Errorf("docs/lab.md has no row for %s", key)
		}
	}
}

// TestShippedFilesLoad: every scenario file beside the code, the ones make
// bench runs among them, loads as it is.
func TestShippedFilesLoad(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			if _, err := Load(f); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestDefault pins down what `upflab run` runs without a file.
func TestDefault(t *testing.T) {
	s := Default()
	if s.UPF.Kind != UPFBuiltIn || s.Sessions.Count != 1000 || !s.MeasuresReference() {
		t.Errorf("default runs %s with %d sessions, reference %v; want upfd, 1000, true", s.UPF.Kind, s.Sessions.Count, s.Reference)
	}
	var kinds []string
	var sizes []Size
	for _, st := range s.Steps {
		kinds = append(kinds, st.Kind)
		if th, ok := st.Settings.(*Throughput); ok {
			if th.Direction != Both || !th.Rate.Max {
				t.Errorf("%s: want both directions, flat out", st.Name)
			}
			sizes = append(sizes, th.Size)
		}
	}
	if !slices.Equal(kinds, []string{KindThroughput, KindThroughput, KindNDR, KindPing}) ||
		!slices.Equal(sizes, []Size{{Bytes: 1400}, {Bytes: 64}}) {
		t.Errorf("default steps %v at sizes %v; want throughput at 1400 and 64, ndr, ping", kinds, sizes)
	}
	// Traffic, twice where the reference runs too; setup and teardown take
	// seconds, so the whole stays well under 3 minutes.
	if d := s.Estimate(); d > 2*time.Minute {
		t.Errorf("default sends for %s; want at most 2m", d)
	}
	if !slices.Equal(s.Outputs.Formats, []string{"json", "csv", "md", "png"}) {
		t.Errorf("default formats %v; want all", s.Outputs.Formats)
	}
}

// The reference forwarder as the UPF under test is measured against
// itself, in the twin, only when the file asks.
func TestReferenceAgainstItself(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"upf: reference\nsteps: [{kind: throughput, duration: 1s}]\n", false},
		{"upf: reference\nreference: true\nsteps: [{kind: throughput, duration: 1s}]\n", true},
		{"upf: upfd\nsteps: [{kind: throughput, duration: 1s}]\n", true},
	} {
		s := mustParse(t, c.text)
		if s.MeasuresReference() != c.want || s.Estimate() != map[bool]time.Duration{false: 2 * time.Second, true: 4 * time.Second}[c.want] {
			t.Errorf("%q: measures the reference %v in %v of traffic; want %v", c.text, s.MeasuresReference(), s.Estimate(), c.want)
		}
	}
}

func TestDefaultsOfAbsentKeys(t *testing.T) {
	s := mustParse(t, "steps:\n  - kind: throughput\n  - kind: ping\n  - kind: subscribers\n")
	// 2000 sessions, not 1000: the subscriber model's largest count.
	if s.Name != "scenario" || s.Topology != (Topology{Name: "upflab", Queues: 1}) || s.UPF.Kind != UPFBuiltIn ||
		s.Sessions != (Sessions{Count: 2000, Profile: "plain", Flows: 1}) || !s.Reference {
		t.Errorf("defaults: %+v", s)
	}
	names := []string{s.Steps[0].Name, s.Steps[1].Name, s.Steps[2].Name}
	if want := []string{"throughput both 1400 B max", "ping 64-1400 B", "subscribers 100-2000"}; !slices.Equal(names, want) {
		t.Errorf("derived names %q; want %q", names, want)
	}
	if sub := s.Steps[2].Settings.(*Subscribers); !reflect.DeepEqual(sub.Uplink, SeedUplink) || !reflect.DeepEqual(sub.Counts, []int{100, 500, 1000, 2000}) {
		t.Errorf("subscribers defaults %+v; want seed 003's model", sub)
	}
	if s, err := Parse("smoke-test.yaml", []byte("steps: [{kind: churn}]")); err != nil || s.Name != "smoke-test" {
		t.Errorf("name of a file without name: %v, %v; want its base name, smoke-test", s, err)
	}
}

// TestSeedModel pins the subscriber model to seed 003's figures.
func TestSeedModel(t *testing.T) {
	for _, tc := range []struct {
		flows     []Flow
		kbps, pps float64
		bytes     []int
	}{
		{SeedUplink, 2089.4, 422, []int{770, 405}},
		{SeedDownlink, 3948.8, 696, []int{908, 539}},
	} {
		var bps, pps float64
		var bytes []int
		for _, f := range tc.flows {
			bps, pps, bytes = bps+f.Rate.BPS, pps+f.PPS, append(bytes, f.PacketBytes())
		}
		if bps/1e3 != tc.kbps || pps != tc.pps || !slices.Equal(bytes, tc.bytes) {
			t.Errorf("%v kbit/s at %v pps in packets of %v; want %v, %v, %v", bps/1e3, pps, bytes, tc.kbps, tc.pps, tc.bytes)
		}
	}
}

func TestLoad(t *testing.T) {
	if _, err := Load("testdata/none.yaml"); err == nil || err.Error() != "read testdata/none.yaml: no such file or directory" {
		t.Errorf("Load of a missing file: %v", err)
	}
	path := t.TempDir() + "/s.yaml"
	os.WriteFile(path, []byte("steps: [{kind: ping, count: 0}]\n"), 0o644)
	_, err := Load(path)
	var e *Error
	if !errors.As(err, &e) || e.File != path || e.Line != 1 || e.Key != "steps[0].count" {
		t.Errorf("Load: %#v; want an *Error at %s:1 steps[0].count", err, path)
	}
}

func TestEstimate(t *testing.T) {
	s := mustParse(t, "sessions: {count: 2000}\nsteps:\n"+
		"  - {kind: throughput, direction: both, duration: 5s}\n"+ // 10s, and 10s more through the reference
		"  - {kind: ndr, direction: uplink, max_iterations: 4, trial: 1s}\n"+ // 4s and 3s to confirm, twice
		"  - {kind: ping, sizes: [64, 1400], count: 100, interval: 10ms}\n"+ // 2s
		"  - {kind: cbr, sizes: [64, 1400], duration: 2s}\n"+ // 4s
		"  - {kind: subscribers, counts: [100, 2000], duration: 3s}\n"+ // 6s, twice
		"  - {kind: churn, duration: 5s}\n") // 5s
	if got, want := s.Estimate(), (20+14+2+4+12+5)*time.Second; got != want {
		t.Errorf("Estimate() = %s; want %s", got, want)
	}
	s.Reference = false
	if got, want := s.Estimate(), (10+7+2+4+6+5)*time.Second; got != want {
		t.Errorf("without the reference, Estimate() = %s; want %s", got, want)
	}
}

func TestValidateScenarioBuiltInCode(t *testing.T) {
	s := Default()
	s.src = nil
	s.Steps = append(s.Steps, Step{Kind: KindCBR, Name: "cbr"})
	if err := s.Validate(); err == nil || err.Error() != `steps[4]: a "cbr" step without its settings: set Settings to a *scenario.CBR` {
		t.Errorf("got %v", err)
	}
	s.Steps[4].Settings = &Ping{}
	if err := s.Validate(); err == nil || err.Error() != `steps[4]: a "cbr" step with the settings of another kind (*scenario.Ping); set Settings to a *scenario.CBR` {
		t.Errorf("got %v", err)
	}
	s.Steps[4] = Step{Kind: "trex", Name: "x", Settings: &Ping{}}
	if err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), `steps[4]: no step kind "trex"; use one of throughput, ndr,`) {
		t.Errorf("got %v", err)
	}
	s = Default()
	s.src = nil
	s.Sessions.Count = 200_000
	if err := s.Validate(); err == nil || err.Error() != "sessions.count: 200000 sessions are more than upfd's max_sessions, 100000; raise upf.config.max_sessions to 200000" {
		t.Errorf("got %v", err)
	}
}
