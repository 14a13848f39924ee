package scenario

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/sluice-upf/sluice/internal/yamlfile"
	"github.com/sluice-upf/sluice/lab/topo"
)

// TestBadFiles pins down the error each kind of mistake gets: the line,
// the key, and what to write instead.
func TestBadFiles(t *testing.T) {
	const steps = "steps:\n  - kind: throughput\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		// The file as a whole.
		{"empty", "", `scenario.yaml:1: the file is empty; a scenario needs at least steps:`},
		{"only comments", "# nothing yet\n", `scenario.yaml:1: the file is empty; a scenario needs at least steps:`},
		{"no steps", "name: x\n", `scenario.yaml: steps: no steps; add at least one, e.g. - {kind: throughput, direction: both, size: 1400}`},
		{"empty steps", "steps: []\n", `scenario.yaml:1: steps: no steps; add at least one, e.g. - {kind: throughput, direction: both, size: 1400}`},
		{"syntax", "name: x\nsteps: [\n", `scenario.yaml:2: invalid YAML: did not find expected node content; check the indentation, colons and quotes on this line and the one before`},
		{"tab indent", "steps:\n\t- kind: ping\n", `scenario.yaml:2: invalid YAML: found character that cannot start any token; check the indentation, colons and quotes on this line and the one before`},
		{"second document", steps + "---\nname: y\n", `scenario.yaml:4: a second YAML document starts here; a scenario is one, so remove the "---" above it`},
		{"a list at the top", "- kind: ping\n", `scenario.yaml:1: got a list; want a scenario with keys such as name and topology`},

		// Keys.
		{"unknown key", "nmae: x\n" + steps, `scenario.yaml:1: nmae: unknown key; did you mean name? a scenario takes name, topology, upf, reference, sessions, steps or outputs`},
		{"unknown key far from any", "colour: red\n" + steps, `scenario.yaml:1: colour: unknown key; a scenario takes name, topology, upf, reference, sessions, steps or outputs`},
		{"key twice", "name: a\nname: b\n" + steps, `scenario.yaml:2: name: set twice (first on line 1); keep one`},
		{"alias", "sessions: &s {count: 5}\ntopology: *s\n" + steps, `scenario.yaml:2: topology: aliases are not supported; write the value out in full`},
		{"merge key", "sessions:\n  <<: {count: 5}\n" + steps, `scenario.yaml:2: sessions.<<: merge keys are not supported; write the keys out in full`},
		{"key of another step kind", "steps:\n  - kind: throughput\n    sizes: [64]\n", `scenario.yaml:3: steps[0].sizes: a key of ping steps, not here; a throughput step takes kind, name, direction, size, rate, duration, cores or rounds`},
		{"misspelt step key", "steps:\n  - kind: ping\n    intervall: 1s\n", `scenario.yaml:3: steps[0].intervall: unknown key; did you mean interval? a ping step takes kind, name, sizes, count, interval or mode`},
		{"unknown topology key", "topology:\n  n6: true\n" + steps, `scenario.yaml:2: topology.n6: unknown key; did you mean n9? topology takes name, n9 or queues`},
		{"key with a dot", "\"a.b\": 1\n" + steps, `scenario.yaml:1: "a.b": unknown key; a scenario takes name, topology, upf, reference, sessions, steps or outputs`},

		// Types.
		{"mapping for a value", "name: {a: 1}\n" + steps, `scenario.yaml:1: name: got a mapping; want a name such as smoke`},
		{"list for a mapping", "topology: [a]\n" + steps, `scenario.yaml:1: topology: got a list; want topology with keys such as name and n9`},
		{"step not a mapping", "steps:\n  - throughput\n", `scenario.yaml:2: steps[0]: got a single value; want a mapping with kind: and the step's keys`},
		{"bool", "topology:\n  n9: yes\n" + steps, `scenario.yaml:2: topology.n9: "yes" is not true or false`},
		{"count", "sessions:\n  count: many\n" + steps, `scenario.yaml:2: sessions.count: "many" is not a whole number; want 1 to 1000000`},

		// Values.
		{"rate", "steps:\n  - kind: throughput\n    size: 64\n    rate: fast\n", `scenario.yaml:4: steps[0].rate: "fast" is not a rate; want e.g. 1Mpps, 500kpps, 2Gbps or "max"`},
		{"rate without unit", "steps:\n  - kind: throughput\n    rate: 500\n", `scenario.yaml:3: steps[0].rate: "500" has no unit; want e.g. 500kpps or 500Mbps or "max"`},
		{"rate of zero", "steps:\n  - kind: throughput\n    rate: 0kpps\n", `scenario.yaml:3: steps[0].rate: "0kpps" is not above 0; want e.g. 1Mpps, 500kpps, 2Gbps or "max"`},
		{"cbr rate hints flood", "steps:\n  - kind: cbr\n    rate: lots\n", `scenario.yaml:3: steps[0].rate: "lots" is not a rate; want e.g. 1Mpps, 500kpps, 2Gbps or "flood"`},
		{"size", "steps:\n  - kind: throughput\n    size: jumbo\n", `scenario.yaml:3: steps[0].size: "jumbo" is not a size; want payload bytes from 24 to 1428, e.g. 64 or 1400, or imix`},
		{"size too big", "steps:\n  - kind: throughput\n    size: 1500\n", `scenario.yaml:3: steps[0].size: 1500 bytes is out of range; want 24 to 1428 (the generator's stamp takes 24, and 1428 fill a 1500-byte MTU after the tunnel)`},
		{"size without room for the stamp", "steps:\n  - kind: throughput\n    size: 16\n", `scenario.yaml:3: steps[0].size: 16 bytes is out of range; want 24 to 1428 (the generator's stamp takes 24, and 1428 fill a 1500-byte MTU after the tunnel)`},
		{"restart size without room for the stamp", "steps:\n  - kind: restart\n    size: 23\n", `scenario.yaml:3: steps[0].size: 23 bytes is out of range; want 24 to 1428 (the generator's stamp takes 24, and 1428 fill a 1500-byte MTU after the tunnel)`},
		{"cbr size too small", "steps:\n  - kind: cbr\n    sizes: [64, 16]\n", `scenario.yaml:3: steps[0].sizes[1]: 16 bytes is out of range; want 24 to 1428 (the generator's stamp takes 24, and 1428 fill a 1500-byte MTU after the tunnel)`},
		{"ping size too big", "steps:\n  - kind: ping\n    sizes: [64, 1429]\n", `scenario.yaml:3: steps[0].sizes[1]: 1429 bytes is out of range; want 0 to 1428 (1428 fill a 1500-byte MTU after the tunnel)`},
		{"sizes empty", "steps:\n  - kind: cbr\n    sizes: []\n", `scenario.yaml:3: steps[0].sizes: empty; want a list such as [64, 1400]`},
		{"duration without unit", "steps:\n  - kind: throughput\n    duration: 5\n", `scenario.yaml:3: steps[0].duration: "5" has no unit; write it with one, e.g. 5s or 5ms`},
		{"duration of zero", "steps:\n  - kind: churn\n    duration: 0s\n", `scenario.yaml:3: steps[0].duration: "0s" is not above 0; want a duration such as 2s or 500ms`},
		{"direction", "steps:\n  - kind: throughput\n    direction: up\n", `scenario.yaml:3: steps[0].direction: "up" is not a direction; want uplink, downlink or both`},
		{"step kind", "steps:\n  - kind: trhoughput\n", `scenario.yaml:2: steps[0].kind: "trhoughput" is not a step kind; want ` + yamlfile.OrList(Kinds)},
		{"no step kind", "steps:\n  - size: 64\n", `scenario.yaml:2: steps[0]: no kind; add kind: ` + yamlfile.OrList(Kinds)},
		{"loss tolerance without %", "steps:\n  - kind: ndr\n    loss_tolerance: 0.005\n", `scenario.yaml:3: steps[0].loss_tolerance: "0.005" has no %; write it as a percentage, e.g. 0.005%`},
		{"loss tolerance of 100%", "steps:\n  - kind: ndr\n    loss_tolerance: 100%\n", `scenario.yaml:3: steps[0].loss_tolerance: "100%" is out of range; want 0% or more, below 100%`},
		{"resolution flat out", "steps:\n  - kind: ndr\n    resolution: max\n", `scenario.yaml:3: steps[0].resolution: "max" is not a rate; want e.g. 1Mpps, 500kpps, 2Gbps`},
		{"iterations", "steps:\n  - kind: ndr\n    max_iterations: 100\n", `scenario.yaml:3: steps[0].max_iterations: "100" is out of range; want 1 to 64`},
		{"cores", "steps:\n  - kind: throughput\n    cores: 2\n", `scenario.yaml:3: steps[0].cores: "2" is not a number of cores; want 1 (generator, UPF and sink on one core: the closed loop) or all`},
		{"confirmations", "steps:\n  - kind: ndr\n    confirm: 20\n", `scenario.yaml:3: steps[0].confirm: "20" is out of range; want 0 to 16`},
		{"rounds too short", "steps:\n  - kind: throughput\n    duration: 1s\n    rounds: 100\n", `scenario.yaml:4: steps[0].rounds: 100 rounds of 1s are 10ms each; want 20ms a round at least: fewer rounds or a longer duration`},
		{"rounds too short by default", "steps:\n  - kind: throughput\n    rounds: 500\n", `scenario.yaml:3: steps[0].rounds: 500 rounds of 5s are 10ms each; want 20ms a round at least: fewer rounds or a longer duration`},
		{"profile", "sessions:\n  profile: oai\n" + steps, `scenario.yaml:2: sessions.profile: "oai" is not a profile; want plain, open5gs or free5gc`},
		{"format", "outputs:\n  formats: [json, pdf]\n" + steps, `scenario.yaml:2: outputs.formats[1]: "pdf" is not a format; want json, csv, md or png`},
		{"lab name", "topology:\n  name: my lab\n" + steps, `scenario.yaml:2: topology.name: "my lab" has ' '; use only letters, digits, '-' and '_'`},
		{"upf kind", "upf: open5gs\n" + steps, `scenario.yaml:1: upf: "open5gs" is not a UPF kind; want upfd, reference or command`},
		{"flow protocol", "steps:\n  - kind: subscribers\n    uplink:\n      - {protocol: quic, rate: 1Mbps, pps: 100}\n", `scenario.yaml:4: steps[0].uplink[0].protocol: "quic" is not a protocol; want tcp or udp`},
		{"flow rate in packets", "steps:\n  - kind: subscribers\n    uplink:\n      - {rate: 100kpps, pps: 100}\n", `scenario.yaml:4: steps[0].uplink[0].rate: "100kpps" is a packet rate; write the bit rate here (e.g. 567.2kbps) and the packets in pps:`},
		{"no flows", "steps:\n  - kind: subscribers\n    downlink: []\n", `scenario.yaml:3: steps[0].downlink: no flows; give at least one, or leave downlink out for seed 003's`},

		// Rules between values.
		{"step names clash", "steps:\n  - kind: ping\n  - kind: ping\n", `scenario.yaml:3: steps[1]: "ping 64-1400 B" is also the name of steps[0] (line 2); steps are matched by name, so give one a name: of its own`},
		{"named steps clash", "steps:\n  - {kind: ping, name: a}\n  - {kind: cbr, name: a}\n", `scenario.yaml:3: steps[1].name: "a" is also the name of steps[0] (line 2); steps are matched by name, so give one a name: of its own`},
		{"size twice", "steps:\n  - kind: ping\n    sizes: [64, 128, 64]\n", `scenario.yaml:3: steps[0].sizes[2]: 64 is listed already as steps[0].sizes[0]; list each once`},
		{"more subscribers than sessions", "sessions:\n  count: 500\nsteps:\n  - kind: subscribers\n    counts: [100, 1000]\n", `scenario.yaml:5: steps[0].counts[1]: 1000 subscribers are more than the 500 sessions (line 2); each subscriber has one session, so raise sessions.count`},
		{"subscriber defaults above sessions", "sessions:\n  count: 1000\nsteps:\n  - kind: subscribers\n", `scenario.yaml:4: steps[0].counts[3]: 2000 subscribers are more than the 1000 sessions (line 2); each subscriber has one session, so raise sessions.count`},
		{"flow of packets too small", "steps:\n  - kind: subscribers\n    counts: [10]\n    uplink:\n      - {protocol: tcp, rate: 10kbps, pps: 100}\n", `scenario.yaml:5: steps[0].uplink[0]: 10kbps at 100 pps makes 13-byte packets; want 64 to 1456 bytes: change rate or pps`},
		{"flow without pps", "steps:\n  - kind: subscribers\n    counts: [10]\n    uplink:\n      - {rate: 1Mbps}\n", `scenario.yaml:5: steps[0].uplink[0]: the flow has no pps; add pps: with its packets per second, e.g. 175`},
		{"more flows than the sink keeps", "upf: reference\nsessions:\n  count: 300000\n  flows: 4\n" + steps, `scenario.yaml:4: sessions.flows: 300000 sessions × 4 flows are 1200000 flows; the generator and the sink keep 1048576 at the most, so lower sessions.count or sessions.flows`},
		{"churn above sessions", "sessions: {count: 50}\nsteps:\n  - {kind: churn, per_second: 100}\n", `scenario.yaml:3: steps[0].per_second: 100 is more than the 50 sessions (line 1); churn re-establishes sessions that exist`},
		{"ndr resolution above max rate", "steps:\n  - kind: ndr\n    max_rate: 1Mpps\n    resolution: 2Mpps\n", `scenario.yaml:4: steps[0].resolution: 2Mpps is not finer than max_rate, 1Mpps; the search would stop at once: lower it`},
		{"output placeholder", "outputs:\n  directory: out/{date}\n" + steps, `scenario.yaml:2: outputs.directory: {date} is not a placeholder here; want {name} or {time}`},
		{"format twice", "outputs:\n  formats: [md, md]\n" + steps, `scenario.yaml:2: outputs.formats[1]: md is listed already as outputs.formats[0]; list each once`},

		// The UPF under test.
		{"command without command", "upf:\n  kind: command\n" + steps, `scenario.yaml:2: upf.kind: a command UPF needs a command line, e.g. command: eupf --config {config}`},
		{"command of upfd", "upf:\n  kind: upfd\n  command: eupf\n" + steps, `scenario.yaml:3: upf.command: only a command UPF runs a command; set kind: command, or remove command:`},
		{"unknown placeholder", "upf:\n  kind: command\n  command: eupf --n3 {n3_dev}\n" + steps, `scenario.yaml:3: upf.command: {n3_dev} is not a placeholder; want {n3}, {n6}, {n9}, {n3_addr}, {n4_addr}, {n6_addr}, {n9_addr}, {smf_addr}, {gnb_addr}, {dn_addr}, {ue_pool}, {netns} or {config}`},
		{"n9 without n9", "upf:\n  kind: command\n  command: upf {n3} {n6} {n9}\n" + steps, `scenario.yaml:3: upf.command: uses N9, which the topology leaves out; set topology.n9: true`},
		{"config unread", "upf:\n  kind: command\n  command: eupf\n  config: |\n    a: 1\n" + steps, `scenario.yaml:4: upf.config: the command never reads it; pass its file with {config}`},
		{"config missing", "upf:\n  kind: command\n  command: eupf -c {config}\n" + steps, `scenario.yaml:3: upf.command: {config} names the file of upf.config, which is not set; add config: | and the file's text`},
		{"command config as a mapping", "upf:\n  kind: command\n  command: eupf -c {config}\n  config:\n    a: 1\n" + steps, `scenario.yaml:5: upf.config: got a mapping; want the text of the UPF's config file, after config: |`},
		{"reference with config", "upf:\n  kind: reference\n  config: {a: 1}\n" + steps, `scenario.yaml:3: upf.config: the reference forwarder takes no config; remove it`},
		{"upfd config as text", "upf:\n  kind: upfd\n  config: max_sessions=5\n" + steps, `scenario.yaml:3: upf.config: got a single value; want a mapping of upfd.yaml keys, e.g. {max_sessions: 200000}`},
		{"upfd config key", "upf:\n  kind: upfd\n  config:\n    xdp_mode: fast\n" + steps, `scenario.yaml:4: upf.config.xdp_mode: "fast" is not a mode; want native, generic or auto`},
		{"upfd config nested key", "upf:\n  config:\n    pfcp:\n      t1: 3\n" + steps, `scenario.yaml:4: upf.config.pfcp.t1: "3" has no unit; write it with one, e.g. 3s or 3ms`},
		{"upfd config unknown key", "upf:\n  config:\n    max_session: 5\n" + steps, `scenario.yaml:3: upf.config.max_session: unknown key; did you mean max_sessions? upfd's config takes node_id, pfcp, gtpu, interfaces, dnns, teid_range, max_sessions, max_pdrs_per_session, gbr_capacity, buffer, xdp_mode, pin_path, state_file, state_fsync, api, metrics or log`},
		{"upfd config list item", "upf:\n  config:\n    interfaces:\n      - {name: n3, role: n3, address: 198.18.3.2}\n      - {name: n6, role: n5}\n" + steps, `scenario.yaml:5: upf.config.interfaces[1].role: "n5" is not a role; want n3, n6 or n9`},
		{"upfd config default holds too few sessions", "sessions:\n  count: 200000\n" + steps, `scenario.yaml:2: sessions.count: 200000 sessions are more than upfd's max_sessions, 100000; raise upf.config.max_sessions to 200000`},
		{"upfd config sets too few sessions", "upf:\n  config: {max_sessions: 10}\n" + steps, `scenario.yaml:2: upf.config.max_sessions: 10 is fewer than the 1000 sessions of sessions.count; raise it to 1000`},
		{"upfd config holds too few of the sessions set", "sessions: {count: 20}\nupf:\n  config: {max_sessions: 10}\n" + steps, `scenario.yaml:1: sessions.count: 20 sessions are more than upfd's max_sessions, 10 (line 3); raise upf.config.max_sessions to 20`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("scenario.yaml", []byte(tc.text))
			if err == nil {
				t.Fatalf("Parse took it; want\n%s", tc.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %T is not an *Error", err)
			}
			if err.Error() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

// TestSessionsBeyondTheUEPool: a count the lab's UE pools cannot number
// is refused at its line, naming the pool; the lab's pools hold the
// issue's 100,000 and a million.
func TestSessionsBeyondTheUEPool(t *testing.T) {
	const steps = "steps:\n  - kind: throughput\n"
	for _, tc := range []struct {
		name, pool, pool6, text, want string
	}{
		{"100,000 in the lab's pools", "", "", "upf: {config: {max_sessions: 100000}}\nsessions:\n  count: 100000\n" + steps, ""},
		{"a million in the lab's pools", "", "", "upf: {config: {max_sessions: 1000000}}\nsessions:\n  count: 1000000\n  profile: open5gs\n" + steps, ""},
		{"beyond an IPv4 pool", "10.45.0.0/16", "", "upf: reference\nsessions:\n  count: 70000\n" + steps,
			`scenario.yaml:3: sessions.count: 70000 sessions are more than the 65534 the lab's UE pool 10.45.0.0/16 holds; lower it to 65534`},
		{"beyond the IPv6 pool of IPv4v6 sessions", "", "2001:db8:45::/48", "upf: reference\nsessions:\n  count: 70000\n  profile: open5gs\n" + steps,
			`scenario.yaml:3: sessions.count: 70000 sessions are more than the 65536 the lab's UE pools 10.32.0.0/12 and 2001:db8:45::/48 hold; lower it to 65536`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			narrowPools(t, tc.pool, tc.pool6)
			_, err := Parse("scenario.yaml", []byte(tc.text))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("got\n%v\nwant\n%s", err, tc.want)
			}
		})
	}
}

// narrowPools puts other UE pools in the lab's place for the test; ""
// keeps the lab's.
func narrowPools(t *testing.T, pool, pool6 string) {
	was, was6 := topo.UEPool, topo.UEPoolV6
	t.Cleanup(func() { topo.UEPool, topo.UEPoolV6 = was, was6 })
	if pool != "" {
		topo.UEPool = netip.MustParsePrefix(pool)
	}
	if pool6 != "" {
		topo.UEPoolV6 = netip.MustParsePrefix(pool6)
	}
}

// TestDocumentedErrors: the errors docs/lab.md shows are what these
// files get, word for word.
func TestDocumentedErrors(t *testing.T) {
	doc, err := os.ReadFile("../../docs/lab.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"name: fast\nsessions:\n  count: 10\nsteps:\n  - kind: ping\n  - kind: cbr\n  - kind: throughput\n    name: slow\n    direction: uplink\n    size: 64\n    duration: 1s\n    rate: fast\n",
		"steps:\n  - kind: throughput\n    sizes: [64]\n",
		"steps:\n  - kind: throughput\n    direction: uplink\n    size: 16\n",
		"name: subs\nsessions: {count: 500}\nsteps:\n  - kind: subscribers\n    counts: [100, 1000]\n",
		"upf:\n  kind: upfd\n  config:\n    xdp_mode: fast\nsteps:\n  - kind: ping\n",
	} {
		_, err := Parse("scenario.yaml", []byte(text))
		if err == nil {
			t.Errorf("%q: parsed; want an error docs/lab.md shows", text)
			continue
		}
		if !strings.Contains(string(doc), "\n    "+err.Error()+"\n") {
			t.Errorf("docs/lab.md does not show the error of %q:\n    %s", text, err)
		}
	}
}
