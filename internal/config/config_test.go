package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// example is examples/upfd.yaml, which docs/configuration.md shows: the
// lab's, every key set.
var example = func() string {
	b, err := os.ReadFile("../../examples/upfd.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// keys is every key a file may set, as errors name them.
var keys = []string{
	"node_id",
	"pfcp", "pfcp.listen", "pfcp.peers", "pfcp.associate", "pfcp.heartbeat_interval",
	"pfcp.heartbeat_retries", "pfcp.t1", "pfcp.n1", "pfcp.peer_grace",
	"gtpu", "gtpu.echo_interval", "gtpu.echo_retries",
	"interfaces", "interfaces[].name", "interfaces[].role", "interfaces[].address", "interfaces[].mtu",
	"dnns", "dnns[].name", "dnns[].pools",
	"teid_range", "max_sessions", "max_pdrs_per_session", "gbr_capacity", "gbr_capacity.uplink", "gbr_capacity.downlink",
	"buffer", "buffer.packets_per_session", "buffer.total_packets",
	"xdp_mode", "pin_path", "state_file", "state_fsync",
	"api", "api.listen", "api.token", "metrics", "metrics.listen", "log", "log.level", "log.format",
}

// withoutSource drops the key positions so that configs compare by value.
func withoutSource(c *Config) *Config {
	copied := *c
	copied.origin = nil
	return &copied
}

func mustParse(t *testing.T, text string) *Config {
	t.Helper()
	c, err := Parse("upfd.yaml", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return withoutSource(c)
}

// peers are pfcp.peers as upfd reads them.
func peers(list ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(list))
	for i, s := range list {
		p, err := parsePeer(s)
		if err != nil {
			panic(err)
		}
		out[i] = p
	}
	return out
}

func TestParseExample(t *testing.T) {
	want := &Config{
		NodeID: "198.18.4.2",
		PFCP: PFCP{
			Listen:            netip.MustParseAddrPort("198.18.4.2:8805"),
			Peers:             peers("198.18.4.1"),
			Associate:         []netip.AddrPort{},
			HeartbeatInterval: 10 * time.Second,
			HeartbeatRetries:  3,
			T1:                3 * time.Second,
			N1:                3,
			PeerGrace:         time.Minute,
		},
		GTPU: GTPU{EchoInterval: time.Minute, EchoRetries: 3},
		Interfaces: []Interface{
			{Name: "n3", Role: "n3", Address: netip.MustParseAddr("198.18.3.2")},
			{Name: "n6", Role: "n6"},
		},
		DNNs: []DNN{
			{Name: "internet", Pools: []netip.Prefix{netip.MustParsePrefix("10.45.0.0/16")}},
		},
		TEIDRange:         TEIDRange{First: 0x100, Last: 0xffffff},
		MaxSessions:       100000,
		MaxPDRsPerSession: 32,
		Buffer:            Buffer{PacketsPerSession: 64, TotalPackets: 65536},
		XDPMode:           "native",
		StateFile:         "/var/lib/upfd/state.journal",
		API:               API{Listen: netip.MustParseAddrPort("127.0.0.1:8080")},
		Metrics:           Metrics{Listen: netip.MustParseAddrPort("127.0.0.1:9090")},
		Log:               Log{Level: "info", Format: "text"},
	}
	if got := mustParse(t, example); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestExampleSetsEveryKey keeps the documented example complete: a key
// added to the package must be added to it.
func TestExampleSetsEveryKey(t *testing.T) {
	c, err := Parse("upfd.yaml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		if path := strings.ReplaceAll(key, "[]", "[0]"); !c.origin.has(path) {
			t.Errorf("the example does not set %s", key)
		}
	}
}

// TestDocumented checks that docs/configuration.md shows the example as
// it is and describes every key.
func TestDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```yaml\n"+example+"```\n") {
		t.Error("docs/configuration.md does not show examples/upfd.yaml as it is; copy it over")
	}
	for _, key := range keys {
		if !strings.Contains(string(doc), "| `"+key+"` |") {
			t.Errorf("docs/configuration.md has no row for %s", key)
		}
	}
	for _, s := range settings {
		if row := "| `" + s.path + "` | `" + s.env() + "` | `" + s.flag() + "`"; !strings.Contains(string(doc), row) {
			t.Errorf("docs/configuration.md has no row %s |", row)
		}
	}
}

// TestDocumentedFilesParse parses every upfd.yaml that
// docs/configuration.md shows, and the config of its Helm values, so that
// no example is refused.
func TestDocumentedFilesParse(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```yaml\n")[1:]
	if len(blocks) < 3 { // the Helm values are in deployment.md, checked by scripts/lint-deploy.sh
		t.Fatalf("%d YAML examples; want the lab's, its minimum and the host's", len(blocks))
	}
	for i, block := range blocks {
		text, _, _ := strings.Cut(block, "```")
		var helm struct {
			Config yaml.Node `yaml:"config"`
		}
		if err := yaml.Unmarshal([]byte(text), &helm); err == nil && helm.Config.Kind != 0 {
			out, err := yaml.Marshal(&helm.Config)
			if err != nil {
				t.Fatal(err)
			}
			text = string(out)
		}
		if _, err := Parse(fmt.Sprintf("example %d", i+1), []byte(text)); err != nil {
			t.Error(err)
		}
	}
}

func TestParseEmptyGivesDefaults(t *testing.T) {
	for _, text := range []string{"", "\n", "# nothing yet\n", "---\n", "~\n", "---\n...\n"} {
		if got := mustParse(t, text); !reflect.DeepEqual(got, Default()) {
			t.Errorf("%q: got %+v, want the defaults", text, got)
		}
	}
}

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestParseKeepsDefaultsOfAbsentKeys(t *testing.T) {
	got := mustParse(t, "max_sessions: 5\npfcp:\n  peers: [198.18.4.1, 2001:db8::1]\n")
	want := Default()
	want.MaxSessions = 5
	want.PFCP.Peers = peers("198.18.4.1", "2001:db8::1")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestParseKeys pins down how each key of the N4 and path-management
// timers, buffering and pinning is read, over the defaults.
func TestParseKeys(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       func(c *Config)
	}{{
		name: "sections left empty keep their defaults",
		text: "pfcp:\ngtpu:\nbuffer:\n",
		want: func(*Config) {},
	}, {
		name: "heartbeat interval in milliseconds",
		text: "pfcp:\n  heartbeat_interval: 500ms\n",
		want: func(c *Config) { c.PFCP.HeartbeatInterval = 500 * time.Millisecond },
	}, {
		name: "heartbeat interval 0 sends none",
		text: "pfcp:\n  heartbeat_interval: 0\n",
		want: func(c *Config) { c.PFCP.HeartbeatInterval = 0 },
	}, {
		name: "heartbeat retries",
		text: "pfcp:\n  heartbeat_retries: 1\n",
		want: func(c *Config) { c.PFCP.HeartbeatRetries = 1 },
	}, {
		name: "t1 with a fraction, n1",
		text: "pfcp:\n  t1: 1.5s\n  n1: 5\n",
		want: func(c *Config) { c.PFCP.T1, c.PFCP.N1 = 1500*time.Millisecond, 5 },
	}, {
		name: "peer grace in minutes and seconds",
		text: "pfcp:\n  peer_grace: 2m30s\n",
		want: func(c *Config) { c.PFCP.PeerGrace = 150 * time.Second },
	}, {
		name: "peer grace 0 deletes at once",
		text: "pfcp:\n  peer_grace: 0s\n",
		want: func(c *Config) { c.PFCP.PeerGrace = 0 },
	}, {
		name: "associate takes the PFCP port when none is given",
		text: "pfcp:\n  associate: [198.18.4.1, 198.18.4.9:8806, 2001:db8::1, \"[2001:db8::2]:8805\"]\n",
		want: func(c *Config) {
			c.PFCP.Associate = []netip.AddrPort{
				netip.MustParseAddrPort("198.18.4.1:8805"), netip.MustParseAddrPort("198.18.4.9:8806"),
				netip.MustParseAddrPort("[2001:db8::1]:8805"), netip.MustParseAddrPort("[2001:db8::2]:8805"),
			}
		},
	}, {
		name: "associate with an SMF of a peer network",
		text: "pfcp:\n  peers: [198.18.4.0/24, 2001:db8::/64]\n  associate: [198.18.4.5]\n",
		want: func(c *Config) {
			c.PFCP.Peers = peers("198.18.4.0/24", "2001:db8::/64")
			c.PFCP.Associate = []netip.AddrPort{netip.MustParseAddrPort("198.18.4.5:8805")}
		},
	}, {
		name: "associate with an SMF among the peers",
		text: "pfcp:\n  peers: [198.18.4.1, 198.18.4.5]\n  associate: [198.18.4.5]\n",
		want: func(c *Config) {
			c.PFCP.Peers = peers("198.18.4.1", "198.18.4.5")
			c.PFCP.Associate = []netip.AddrPort{netip.MustParseAddrPort("198.18.4.5:8805")}
		},
	}, {
		name: "associate the same SMF on two ports",
		text: "pfcp:\n  associate: [198.18.4.1, 198.18.4.1:8806]\n",
		want: func(c *Config) {
			c.PFCP.Associate = []netip.AddrPort{netip.MustParseAddrPort("198.18.4.1:8805"), netip.MustParseAddrPort("198.18.4.1:8806")}
		},
	}, {
		name: "echo interval and retries",
		text: "gtpu:\n  echo_interval: 2m\n  echo_retries: 5\n",
		want: func(c *Config) { c.GTPU.EchoInterval, c.GTPU.EchoRetries = 2*time.Minute, 5 },
	}, {
		name: "echo interval 0 sends none",
		text: "gtpu:\n  echo_interval: 0\n",
		want: func(c *Config) { c.GTPU.EchoInterval = 0 },
	}, {
		name: "buffer at its limits, total equal to one session's",
		text: "buffer:\n  packets_per_session: 65535\n  total_packets: 65535\n",
		want: func(c *Config) { c.Buffer = Buffer{PacketsPerSession: 65535, TotalPackets: 65535} },
	}, {
		name: "buffer of one packet",
		text: "buffer:\n  packets_per_session: 1\n  total_packets: 1\n",
		want: func(c *Config) { c.Buffer = Buffer{PacketsPerSession: 1, TotalPackets: 1} },
	}, {
		name: "pin path",
		text: "pin_path: /sys/fs/bpf/upfd\n",
		want: func(c *Config) { c.PinPath = "/sys/fs/bpf/upfd" },
	}, {
		name: "pin path nested",
		text: "pin_path: /sys/fs/bpf/sluice/upf-1\n",
		want: func(c *Config) { c.PinPath = "/sys/fs/bpf/sluice/upf-1" },
	}, {
		name: "xdp mode auto",
		text: "xdp_mode: auto\n",
		want: func(c *Config) { c.XDPMode = XDPAuto },
	}, {
		name: "max pdrs per session",
		text: "max_pdrs_per_session: 1\n",
		want: func(c *Config) { c.MaxPDRsPerSession = 1 },
	}, {
		name: "api on every address with a token",
		text: "api:\n  listen: \"[::]:8081\"\n  token: 9f2c0e51d4\n",
		want: func(c *Config) {
			c.API = API{Listen: netip.MustParseAddrPort("[::]:8081"), Token: "9f2c0e51d4"}
		},
	}, {
		name: "api and metrics turned off",
		text: "api:\n  listen: \"\"\nmetrics:\n  listen:\n",
		want: func(c *Config) { c.API.Listen, c.Metrics.Listen = netip.AddrPort{}, netip.AddrPort{} },
	}, {
		name: "metrics on the N4 address",
		text: "metrics:\n  listen: 198.18.4.2:9100\n",
		want: func(c *Config) { c.Metrics.Listen = netip.MustParseAddrPort("198.18.4.2:9100") },
	}, {
		name: "log in json at debug",
		text: "log:\n  level: debug\n  format: json\n",
		want: func(c *Config) { c.Log = Log{Level: LevelDebug, Format: FormatJSON} },
	}, {
		name: "jumbo mtu",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2, mtu: 9000}\n  - {name: n6, role: n6, mtu: 68}\n",
		want: func(c *Config) { c.Interfaces[0].MTU, c.Interfaces[1].MTU = 9000, 68 },
	}, {
		name: "IPv6 pools, the least mtu for them",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2, mtu: 1280}\n  - {name: n6, role: n6}\ndnns:\n  - {name: internet, pools: [2001:db8:45::/48]}\n  - {name: ims, pools: [10.46.0.0/16, 2001:db8:46::/63]}\n",
		want: func(c *Config) {
			c.Interfaces[0].MTU = 1280
			c.DNNs = []DNN{
				{Name: "internet", Pools: []netip.Prefix{netip.MustParsePrefix("2001:db8:45::/48")}},
				{Name: "ims", Pools: []netip.Prefix{netip.MustParsePrefix("10.46.0.0/16"), netip.MustParsePrefix("2001:db8:46::/63")}},
			}
		},
	}, {
		name: "IPv4 pool of two addresses",
		text: "dnns:\n  - {name: internet, pools: [10.45.0.0/31]}\n",
		want: func(c *Config) { c.DNNs[0].Pools = []netip.Prefix{netip.MustParsePrefix("10.45.0.0/31")} },
	}, {
		name: "state file of a pinned upfd",
		text: "pin_path: /sys/fs/bpf/upfd\nstate_file: /run/upfd/n4.json\n",
		want: func(c *Config) { c.PinPath, c.StateFile = "/sys/fs/bpf/upfd", "/run/upfd/n4.json" },
	}, {
		name: "state file unused without pinning",
		text: "state_file: \"\"\n",
		want: func(c *Config) { c.StateFile = "" },
	}, {
		name: "pin path empty pins nothing",
		text: "pin_path: \"\"\n",
		want: func(*Config) {},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			want := Default()
			tc.want(want)
			if got := mustParse(t, tc.text); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestParseReplacesLists(t *testing.T) {
	got := mustParse(t, `node_id: upf-1.example.net
interfaces:
  - name: eth1
    role: n3
    address: 2001:db8:3::2
  - name: eth2
    role: n6
  - name: eth3
    role: n9
    address: 198.18.9.2
dnns:
  - name: internet
    pools: [10.60.0.0/16, 2001:db8:60::/48]
  - name: ims
    pools: [10.61.0.0/24]
teid_range: 1-4294967295
xdp_mode: generic
`)
	want := Default()
	want.NodeID = "upf-1.example.net"
	want.Interfaces = []Interface{
		{Name: "eth1", Role: RoleN3, Address: netip.MustParseAddr("2001:db8:3::2")},
		{Name: "eth2", Role: RoleN6},
		{Name: "eth3", Role: RoleN9, Address: netip.MustParseAddr("198.18.9.2")},
	}
	want.DNNs = []DNN{
		{Name: "internet", Pools: []netip.Prefix{netip.MustParsePrefix("10.60.0.0/16"), netip.MustParsePrefix("2001:db8:60::/48")}},
		{Name: "ims", Pools: []netip.Prefix{netip.MustParsePrefix("10.61.0.0/24")}},
	}
	want.TEIDRange = TEIDRange{First: 1, Last: 0xffffffff}
	want.XDPMode = XDPGeneric
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{{
		name: "yaml syntax",
		text: "pfcp:\n  listen: 198.18.4.2:8805\n   peers: []\n",
		want: `upfd.yaml:3: invalid YAML: mapping values are not allowed in this context; check the indentation, colons and quotes on this line and the one before`,
	}, {
		name: "yaml syntax on line 1",
		text: "node_id: a: b\n",
		want: `upfd.yaml:1: invalid YAML: mapping values are not allowed in this context; check the indentation, colons and quotes on this line and the one before`,
	}, {
		name: "control character",
		text: "max_sessions: 5\nnode_id: \x01\n",
		want: `upfd.yaml:2: invalid YAML: control characters are not allowed; save the file as UTF-8 text without control characters`,
	}, {
		name: "second document",
		text: "node_id: 198.18.4.2\n---\nmax_sessions: 5\n",
		want: `upfd.yaml:3: a second YAML document starts here; upfd reads one, so remove the "---" above it`,
	}, {
		name: "top level is a list",
		text: "- node_id: 198.18.4.2\n",
		want: `upfd.yaml:1: got a list; want upfd's config with keys such as node_id and pfcp`,
	}, {
		name: "unknown top-level key",
		text: "max_sessions: 5\nnodeid: 198.18.4.2\n",
		want: `upfd.yaml:2: nodeid: unknown key; did you mean node_id? upfd's config takes node_id, pfcp, gtpu, interfaces, dnns, teid_range, max_sessions, max_pdrs_per_session, gbr_capacity, buffer, xdp_mode, pin_path, state_file, state_fsync, api, metrics or log`,
	}, {
		name: "unknown nested key",
		text: "pfcp:\n  listen: 198.18.4.2:8805\n  peer: [198.18.4.1]\n",
		want: `upfd.yaml:3: pfcp.peer: unknown key; did you mean peers? pfcp takes listen, peers, associate, heartbeat_interval, heartbeat_retries, t1, n1 or peer_grace`,
	}, {
		name: "unknown interface key",
		text: "interfaces:\n  - name: n3\n    roll: n3\n",
		want: `upfd.yaml:3: interfaces[0].roll: unknown key; did you mean role? an interface takes name, role, address or mtu`,
	}, {
		name: "key set twice",
		text: "xdp_mode: native\nmax_sessions: 5\nxdp_mode: generic\n",
		want: `upfd.yaml:3: xdp_mode: set twice (first on line 1); keep one`,
	}, {
		name: "alias",
		text: "node_id: &id 198.18.4.2\nxdp_mode: *id\n",
		want: `upfd.yaml:2: xdp_mode: aliases are not supported; write the value out in full`,
	}, {
		name: "list for a single value",
		text: "node_id: [198.18.4.2]\n",
		want: `upfd.yaml:1: node_id: got a list; want an address or FQDN such as 198.18.4.2`,
	}, {
		name: "single value for a list",
		text: "pfcp:\n  peers: 198.18.4.1\n",
		want: `upfd.yaml:2: pfcp.peers: got a single value; want a list of addresses or networks such as [198.18.4.1]`,
	}, {
		name: "single value for a mapping",
		text: "pfcp: 198.18.4.2:8805\n",
		want: `upfd.yaml:1: pfcp: got a single value; want pfcp with keys such as listen and peers`,
	}, {
		name: "listen without port",
		text: "node_id: 198.18.4.2\npfcp:\n  listen: 198.18.4.2\n",
		want: `upfd.yaml:3: pfcp.listen: "198.18.4.2" has no port; write it as 198.18.4.2:8805`,
	}, {
		name: "listen on a host name",
		text: "pfcp:\n  listen: localhost:8805\n",
		want: `upfd.yaml:2: pfcp.listen: "localhost:8805" does not start with an IP address; write the address upfd listens on, e.g. 198.18.4.2:8805`,
	}, {
		name: "listen on port 0",
		text: "pfcp:\n  listen: \"[2001:db8::2]:0\"\n",
		want: `upfd.yaml:2: pfcp.listen: [2001:db8::2]:0 has port 0; use 8805, the PFCP port`,
	}, {
		name: "peer is a host name",
		text: "pfcp:\n  peers:\n    - 198.18.4.1\n    - smf.local\n",
		want: `upfd.yaml:4: pfcp.peers[1]: "smf.local" is neither an IP address nor a network; write the SMF's N4 address, e.g. 198.18.4.1, or its network, e.g. 198.18.4.0/24`,
	}, {
		name: "peer with port",
		text: "pfcp:\n  peers: [198.18.4.1:8805]\n",
		want: `upfd.yaml:2: pfcp.peers[0]: "198.18.4.1:8805" has a port; write the address alone, 198.18.4.1`,
	}, {
		name: "peer network with host bits",
		text: "pfcp:\n  peers: [198.18.4.1/24]\n",
		want: `upfd.yaml:2: pfcp.peers[0]: 198.18.4.1/24 has host bits set; write 198.18.4.0/24 for the network, or 198.18.4.1 for the SMF alone`,
	}, {
		name: "node_id empty",
		text: "node_id: \"\"\n",
		want: `upfd.yaml:1: node_id: empty; set it to the UPF's N4 address, e.g. 198.18.4.2, or to its FQDN`,
	}, {
		name: "node_id bad label",
		text: "node_id: upf_1.example.net\n",
		want: `upfd.yaml:1: node_id: "upf_1.example.net" is neither an IP address nor a valid FQDN: label "upf_1" has '_'; use only letters, digits and '-'`,
	}, {
		name: "node_id mistyped address",
		text: "node_id: 198.18.4.256\n",
		want: `upfd.yaml:1: node_id: "198.18.4.256" is neither an IP address nor a valid FQDN: it ends in a number like an IPv4 address; fix the address or use a host name`,
	}, {
		name: "node_id too long, cut short in the error",
		text: "node_id: " + strings.Repeat("a", 300) + "\n",
		want: `upfd.yaml:1: node_id: "` + strings.Repeat("a", 64) + `"... is neither an IP address nor a valid FQDN: it is longer than 253 characters; shorten it`,
	}, {
		name: "unknown role",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2}\n  - {name: n6, role: n4}\n",
		want: `upfd.yaml:3: interfaces[1].role: "n4" is not a role; want n3, n6 or n9`,
	}, {
		name: "no n6",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2}\n",
		want: `upfd.yaml:1: interfaces: no n6 interface; add one with role: n6`,
	}, {
		name: "two n3",
		text: "interfaces:\n  - {name: eth1, role: n3, address: 198.18.3.2}\n  - {name: eth2, role: n6}\n  - {name: eth3, role: n3, address: 198.18.3.3}\n",
		want: `upfd.yaml:4: interfaces[2].role: a second n3 interface, after interfaces[0] (line 2); upfd takes exactly one, remove one`,
	}, {
		name: "two n9",
		text: "interfaces:\n  - {name: a, role: n3, address: 198.18.3.2}\n  - {name: b, role: n6}\n  - {name: c, role: n9, address: 198.18.9.2}\n  - {name: d, role: n9, address: 198.18.9.3}\n",
		want: `upfd.yaml:5: interfaces[3].role: a second n9 interface, after interfaces[2] (line 4); upfd takes at most one, remove one`,
	}, {
		name: "duplicate device",
		text: "interfaces:\n  - {name: eth1, role: n3, address: 198.18.3.2}\n  - {name: eth1, role: n6}\n",
		want: `upfd.yaml:3: interfaces[1].name: "eth1" is already used by interfaces[0] (line 2); give each interface its own device`,
	}, {
		name: "n3 without address",
		text: "interfaces:\n  - name: eth1\n    role: n3\n  - name: eth2\n    role: n6\n",
		want: `upfd.yaml:2: interfaces[0]: n3 interface "eth1" has no address; add address: with its GTP-U IP, e.g. 198.18.3.2`,
	}, {
		name: "n6 with address",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2}\n  - name: n6\n    role: n6\n    address: 198.18.6.2\n",
		want: `upfd.yaml:5: interfaces[1].address: n6 interface "n6" takes no address (N6 carries plain IP, not GTP-U); remove address:`,
	}, {
		name: "interface address is a prefix",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2/24}\n",
		want: `upfd.yaml:2: interfaces[0].address: "198.18.3.2/24" is a prefix; write the address alone, 198.18.3.2`,
	}, {
		name: "duplicate dnn",
		text: "dnns:\n  - {name: internet, pools: [10.45.0.0/16]}\n  - {name: internet, pools: [10.46.0.0/16]}\n",
		want: `upfd.yaml:3: dnns[1].name: "internet" is already used by dnns[0] (line 2); give each dnn its own name`,
	}, {
		name: "dnn without pools",
		text: "dnns:\n  - name: internet\n",
		want: `upfd.yaml:2: dnns[0]: dnn "internet" has no pools; add pools: with its UE prefixes, e.g. [10.45.0.0/16]`,
	}, {
		name: "no dnn",
		text: "dnns: []\n",
		want: `upfd.yaml:1: dnns: no dnn; add one, e.g. {name: internet, pools: [10.45.0.0/16]}`,
	}, {
		name: "pool not a prefix",
		text: "dnns:\n  - {name: internet, pools: [10.45.0.0]}\n",
		want: `upfd.yaml:2: dnns[0].pools[0]: "10.45.0.0" has no length; write it as a prefix, e.g. 10.45.0.0/16`,
	}, {
		name: "pool with host bits",
		text: "dnns:\n  - {name: internet, pools: [10.45.0.1/16]}\n",
		want: `upfd.yaml:2: dnns[0].pools[0]: 10.45.0.1/16 has host bits set; write 10.45.0.0/16`,
	}, {
		name: "pools overlap across dnns",
		text: "dnns:\n  - name: internet\n    pools:\n      - 10.45.0.0/16\n  - name: ims\n    pools:\n      - 10.46.0.0/16\n      - 10.45.1.0/24\n",
		want: `upfd.yaml:8: dnns[1].pools[1]: 10.45.1.0/24 of dnn "ims" overlaps 10.45.0.0/16 of dnn "internet" (line 4); make the pools disjoint`,
	}, {
		name: "pools overlap within a dnn",
		text: "dnns:\n  - name: internet\n    pools:\n      - 2001:db8::/32\n      - 2001:db8:1::/48\n",
		want: `upfd.yaml:5: dnns[0].pools[1]: 2001:db8:1::/48 of dnn "internet" overlaps 2001:db8::/32 of dnn "internet" (line 4); make the pools disjoint`,
	}, {
		name: "teid_range not a range",
		text: "teid_range: 0x100\n",
		want: `upfd.yaml:1: teid_range: "0x100" is not a range; write it as FIRST-LAST, e.g. 0x100-0xffffff`,
	}, {
		name: "teid_range from 0",
		text: "teid_range: 0-0xffff\n",
		want: `upfd.yaml:1: teid_range: 0x0-0xffff starts at TEID 0, which is reserved; start at 0x1 or above`,
	}, {
		name: "teid_range backwards",
		text: "teid_range: 0x200-0x100\n",
		want: `upfd.yaml:1: teid_range: 0x200-0x100 runs backwards; write the lower TEID first, 0x100-0x200`,
	}, {
		name: "teid_range too large",
		text: "teid_range: 0x100-0x100000000\n",
		want: `upfd.yaml:1: teid_range: "0x100000000" is above 0xffffffff, the largest TEID; lower it`,
	}, {
		name: "teid_range octal-looking",
		text: "teid_range: 0o10-0o20\n",
		want: `upfd.yaml:1: teid_range: "0o10" is not a number; write TEIDs in hex (0x100) or decimal (256)`,
	}, {
		name: "max_sessions zero",
		text: "max_sessions: 0\n",
		want: `upfd.yaml:1: max_sessions: 0 is out of range; want 1 to 16000000`,
	}, {
		name: "max_sessions too many",
		text: "max_sessions: 16000001\n",
		want: `upfd.yaml:1: max_sessions: 16000001 is out of range; want 1 to 16000000`,
	}, {
		name: "max_sessions not a number",
		text: "max_sessions: 1e5\n",
		want: `upfd.yaml:1: max_sessions: "1e5" is not a whole number; want 1 to 16000000`,
	}, {
		name: "xdp_mode",
		text: "xdp_mode: driver\n",
		want: `upfd.yaml:1: xdp_mode: "driver" is not a mode; want native, generic or auto`,
	}, {
		name: "unknown pfcp key",
		text: "pfcp:\n  heartbeat: 10s\n",
		want: `upfd.yaml:2: pfcp.heartbeat: unknown key; pfcp takes listen, peers, associate, heartbeat_interval, heartbeat_retries, t1, n1 or peer_grace`,
	}, {
		name: "unknown gtpu key",
		text: "gtpu:\n  echo_interval: 60s\n  t3: 5s\n",
		want: `upfd.yaml:3: gtpu.t3: unknown key; gtpu takes echo_interval or echo_retries`,
	}, {
		name: "unknown buffer key",
		text: "buffer:\n  packets: 64\n",
		want: `upfd.yaml:2: buffer.packets: unknown key; buffer takes packets_per_session or total_packets`,
	}, {
		name: "gtpu is a single value",
		text: "gtpu: 60s\n",
		want: `upfd.yaml:1: gtpu: got a single value; want gtpu with keys echo_interval and echo_retries`,
	}, {
		name: "buffer is a list",
		text: "buffer: [64, 65536]\n",
		want: `upfd.yaml:1: buffer: got a list; want buffer with keys packets_per_session and total_packets`,
	}, {
		name: "duration is a list",
		text: "pfcp:\n  t1: [3s]\n",
		want: `upfd.yaml:2: pfcp.t1: got a list; want a duration such as 3s`,
	}, {
		name: "duration without a unit",
		text: "pfcp:\n  heartbeat_interval: 10\n",
		want: `upfd.yaml:2: pfcp.heartbeat_interval: "10" has no unit; write it with one, e.g. 10s or 10ms`,
	}, {
		name: "duration in words",
		text: "gtpu:\n  echo_interval: one minute\n",
		want: `upfd.yaml:2: gtpu.echo_interval: "one minute" is not a duration; write a number and a unit (ns, us, ms, s, m or h), e.g. 60s`,
	}, {
		name: "duration with a unit Go does not know",
		text: "pfcp:\n  peer_grace: 1d\n",
		want: `upfd.yaml:2: pfcp.peer_grace: "1d" is not a duration; write a number and a unit (ns, us, ms, s, m or h), e.g. 60s`,
	}, {
		name: "duration empty",
		text: "pfcp:\n  t1:\n",
		want: `upfd.yaml:2: pfcp.t1: empty; write a duration such as 3s`,
	}, {
		name: "heartbeat interval negative",
		text: "pfcp:\n  heartbeat_interval: -10s\n",
		want: `upfd.yaml:2: pfcp.heartbeat_interval: -10s is negative; want a duration such as 10s, or 0 to send no heartbeats`,
	}, {
		name: "t1 zero",
		text: "pfcp:\n  t1: 0s\n",
		want: `upfd.yaml:2: pfcp.t1: 0s would send every request again without waiting for its response; want a duration such as 3s`,
	}, {
		name: "t1 negative",
		text: "pfcp:\n  t1: -500ms\n",
		want: `upfd.yaml:2: pfcp.t1: -500ms is negative; want a duration such as 3s`,
	}, {
		name: "peer grace negative",
		text: "pfcp:\n  peer_grace: -30s\n",
		want: `upfd.yaml:2: pfcp.peer_grace: -30s is negative; want a duration such as 60s, or 0 to delete a lost SMF's sessions at once`,
	}, {
		name: "echo interval negative",
		text: "gtpu:\n  echo_interval: -1m\n",
		want: `upfd.yaml:2: gtpu.echo_interval: -1m0s is negative; want a duration such as 60s, or 0 to send no Echo Requests`,
	}, {
		name: "n1 zero",
		text: "pfcp:\n  n1: 0\n",
		want: `upfd.yaml:2: pfcp.n1: 0 is out of range; want 1 or more`,
	}, {
		name: "n1 negative",
		text: "pfcp:\n  n1: -3\n",
		want: `upfd.yaml:2: pfcp.n1: -3 is out of range; want 1 or more`,
	}, {
		name: "n1 in words",
		text: "pfcp:\n  n1: three\n",
		want: `upfd.yaml:2: pfcp.n1: "three" is not a whole number; want 1 or more`,
	}, {
		name: "n1 is a mapping",
		text: "pfcp:\n  n1: {sends: 3}\n",
		want: `upfd.yaml:2: pfcp.n1: got a mapping; want a number such as 3`,
	}, {
		name: "n1 is a duration",
		text: "pfcp:\n  n1: 3s\n",
		want: `upfd.yaml:2: pfcp.n1: "3s" is not a whole number; want 1 or more`,
	}, {
		name: "n1 too large for a number",
		text: "pfcp:\n  n1: 99999999999999999999\n",
		want: `upfd.yaml:2: pfcp.n1: "99999999999999999999" is out of range; want 1 or more`,
	}, {
		name: "heartbeat retries zero",
		text: "pfcp:\n  heartbeat_retries: 0\n",
		want: `upfd.yaml:2: pfcp.heartbeat_retries: 0 is out of range; want 1 or more`,
	}, {
		name: "echo retries zero",
		text: "gtpu:\n  echo_retries: 0\n",
		want: `upfd.yaml:2: gtpu.echo_retries: 0 is out of range; want 1 or more`,
	}, {
		name: "echo retries with a fraction",
		text: "gtpu:\n  echo_retries: 2.5\n",
		want: `upfd.yaml:2: gtpu.echo_retries: "2.5" is not a whole number; want 1 or more`,
	}, {
		name: "associate is a single value",
		text: "pfcp:\n  associate: 198.18.4.1\n",
		want: `upfd.yaml:2: pfcp.associate: got a single value; want a list of addresses such as [198.18.4.1]`,
	}, {
		name: "associate entry is a host name",
		text: "pfcp:\n  associate:\n    - 198.18.4.1\n    - smf.local\n",
		want: `upfd.yaml:4: pfcp.associate[1]: "smf.local" is not an IP address (upfd resolves no names); write the SMF's N4 address, e.g. 198.18.4.1 or 198.18.4.1:8805`,
	}, {
		name: "associate entry is a host name with a port",
		text: "pfcp:\n  associate: [smf.local:8805]\n",
		want: `upfd.yaml:2: pfcp.associate[0]: "smf.local:8805" is not an IP address (upfd resolves no names); write the SMF's N4 address, e.g. 198.18.4.1 or 198.18.4.1:8805`,
	}, {
		name: "associate entry is a prefix",
		text: "pfcp:\n  associate: [198.18.4.0/24]\n",
		want: `upfd.yaml:2: pfcp.associate[0]: "198.18.4.0/24" is not an IP address (upfd resolves no names); write the SMF's N4 address, e.g. 198.18.4.1 or 198.18.4.1:8805`,
	}, {
		name: "associate entry is a list",
		text: "pfcp:\n  associate: [[198.18.4.1]]\n",
		want: `upfd.yaml:2: pfcp.associate[0]: got a list; want an address such as 198.18.4.1 or 198.18.4.1:8805`,
	}, {
		name: "associate entry empty",
		text: "pfcp:\n  associate: [\"\"]\n",
		want: `upfd.yaml:2: pfcp.associate[0]: empty; write the SMF's N4 address, e.g. 198.18.4.1 or 198.18.4.1:8805`,
	}, {
		name: "associate port too large",
		text: "pfcp:\n  associate: [198.18.4.1:88050]\n",
		want: `upfd.yaml:2: pfcp.associate[0]: "198.18.4.1:88050" has port "88050"; want 1 to 65535, normally 8805`,
	}, {
		name: "associate port 0",
		text: "pfcp:\n  associate: [198.18.4.1:0]\n",
		want: `upfd.yaml:2: pfcp.associate[0]: 198.18.4.1:0 has port 0; use 8805, the PFCP port`,
	}, {
		name: "associate unspecified",
		text: "pfcp:\n  associate: [0.0.0.0]\n",
		want: `upfd.yaml:2: pfcp.associate[0]: 0.0.0.0 is unspecified; write the SMF's N4 address, e.g. 198.18.4.1`,
	}, {
		name: "associate lists an SMF twice",
		text: "pfcp:\n  associate:\n    - 198.18.4.1\n    - 198.18.4.1:8805\n",
		want: `upfd.yaml:4: pfcp.associate[1]: 198.18.4.1:8805 is already listed as pfcp.associate[0] (line 3); list each SMF once`,
	}, {
		name: "associate with an SMF that peers leave out",
		text: "pfcp:\n  peers: [198.18.4.1]\n  associate: [198.18.4.9]\n",
		want: `upfd.yaml:3: pfcp.associate[0]: 198.18.4.9 is not in pfcp.peers (line 2), so upfd would refuse its requests; add 198.18.4.9 there`,
	}, {
		name: "packets per session zero",
		text: "buffer:\n  packets_per_session: 0\n",
		want: `upfd.yaml:2: buffer.packets_per_session: 0 is out of range; want 1 to 65535`,
	}, {
		name: "packets per session above the limit",
		text: "buffer:\n  packets_per_session: 65536\n",
		want: `upfd.yaml:2: buffer.packets_per_session: 65536 is out of range; want 1 to 65535`,
	}, {
		name: "packets per session negative",
		text: "buffer:\n  packets_per_session: -1\n",
		want: `upfd.yaml:2: buffer.packets_per_session: -1 is out of range; want 1 to 65535`,
	}, {
		name: "total below one session's",
		text: "buffer:\n  packets_per_session: 128\n  total_packets: 100\n",
		want: `upfd.yaml:3: buffer.total_packets: 100 is less than buffer.packets_per_session, 128 (line 2); raise it to at least 128 or lower buffer.packets_per_session`,
	}, {
		name: "total zero",
		text: "buffer:\n  total_packets: 0\n",
		want: `upfd.yaml:2: buffer.total_packets: 0 is less than buffer.packets_per_session, 64; raise it to at least 64 or lower buffer.packets_per_session`,
	}, {
		name: "total zero with packets per session zero",
		text: "buffer:\n  packets_per_session: 0\n  total_packets: 0\n",
		want: `upfd.yaml:2: buffer.packets_per_session: 0 is out of range; want 1 to 65535`,
	}, {
		name: "total not a number",
		text: "buffer:\n  total_packets: 64k\n",
		want: `upfd.yaml:2: buffer.total_packets: "64k" is not a whole number; want 1 or more`,
	}, {
		name: "pin path relative",
		text: "pin_path: bpf/upfd\n",
		want: `upfd.yaml:1: pin_path: "bpf/upfd" is relative; write a directory under /sys/fs/bpf, e.g. /sys/fs/bpf/upfd`,
	}, {
		name: "pin path outside bpffs",
		text: "pin_path: /var/lib/upfd\n",
		want: `upfd.yaml:1: pin_path: "/var/lib/upfd" is outside /sys/fs/bpf, and only the BPF file system mounted there holds pins; write e.g. /sys/fs/bpf/upfd`,
	}, {
		name: "pin path beside bpffs",
		text: "pin_path: /sys/fs/bpffs/upfd\n",
		want: `upfd.yaml:1: pin_path: "/sys/fs/bpffs/upfd" is outside /sys/fs/bpf, and only the BPF file system mounted there holds pins; write e.g. /sys/fs/bpf/upfd`,
	}, {
		name: "pin path climbs out of bpffs",
		text: "pin_path: /sys/fs/bpf/../../../etc\n",
		want: `upfd.yaml:1: pin_path: "/sys/fs/bpf/../../../etc" is outside /sys/fs/bpf, and only the BPF file system mounted there holds pins; write e.g. /sys/fs/bpf/upfd`,
	}, {
		name: "pin path is the bpffs root",
		text: "pin_path: /sys/fs/bpf\n",
		want: `upfd.yaml:1: pin_path: "/sys/fs/bpf" is the root of the BPF file system; give upfd a directory of its own, e.g. /sys/fs/bpf/upfd`,
	}, {
		name: "pin path with a trailing slash",
		text: "pin_path: /sys/fs/bpf/upfd/\n",
		want: `upfd.yaml:1: pin_path: "/sys/fs/bpf/upfd/" is not written plainly; write /sys/fs/bpf/upfd`,
	}, {
		name: "pin path with a dot in a name",
		text: "pin_path: /sys/fs/bpf/upfd.n3\n",
		want: `upfd.yaml:1: pin_path: "/sys/fs/bpf/upfd.n3" has a '.' in a name below /sys/fs/bpf, which the BPF file system refuses; remove it`,
	}, {
		name: "pin path is a list",
		text: "pin_path: [/sys/fs/bpf/upfd]\n",
		want: `upfd.yaml:1: pin_path: got a list; want a directory such as /sys/fs/bpf/upfd`,
	}, {
		name: "mtu below IPv4's least",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2, mtu: 67}\n  - {name: n6, role: n6}\n",
		want: `upfd.yaml:2: interfaces[0].mtu: 67 is out of range; want 68 to 65535, or 0 to keep the device's`,
	}, {
		name: "mtu above Linux's most",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2}\n  - {name: n6, role: n6, mtu: 65536}\n",
		want: `upfd.yaml:3: interfaces[1].mtu: 65536 is out of range; want 68 to 65535, or 0 to keep the device's`,
	}, {
		name: "mtu negative",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2, mtu: -1}\n  - {name: n6, role: n6}\n",
		want: `upfd.yaml:2: interfaces[0].mtu: -1 is out of range; want 68 to 65535, or 0 to keep the device's`,
	}, {
		name: "mtu with a unit",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2, mtu: 1500B}\n",
		want: `upfd.yaml:2: interfaces[0].mtu: "1500B" is not a whole number; want 68 to 65535, or 0 to keep the device's`,
	}, {
		name: "mtu too small for an IPv6 GTP-U address",
		text: "interfaces:\n  - {name: n3, role: n3, address: 2001:db8:3::2, mtu: 1000}\n  - {name: n6, role: n6}\n",
		want: `upfd.yaml:2: interfaces[0].mtu: 1000 is below 1280, the least IPv6 allows (RFC 8200 §5), and the GTP-U address 2001:db8:3::2 is IPv6; raise it to 1280 or more, or 0 to keep the device's`,
	}, {
		name: "mtu too small for IPv6 UEs",
		text: "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2}\n  - {name: n6, role: n6, mtu: 1200}\ndnns:\n  - name: internet\n    pools:\n      - 10.45.0.0/16\n      - 2001:db8:45::/48\n",
		want: `upfd.yaml:3: interfaces[1].mtu: 1200 is below 1280, the least IPv6 allows (RFC 8200 §5), and the UE pool 2001:db8:45::/48 (line 8) is IPv6; raise it to 1280 or more, or 0 to keep the device's`,
	}, {
		name: "max_pdrs_per_session above the datapath's",
		text: "max_pdrs_per_session: 33\n",
		want: `upfd.yaml:1: max_pdrs_per_session: 33 is out of range; want 1 to 32`,
	}, {
		name: "max_pdrs_per_session zero",
		text: "max_pdrs_per_session: 0\n",
		want: `upfd.yaml:1: max_pdrs_per_session: 0 is out of range; want 1 to 32`,
	}, {
		name: "api listen on a host name",
		text: "api:\n  listen: localhost:8080\n",
		want: `upfd.yaml:2: api.listen: "localhost:8080" does not start with an IP address (upfd resolves no names); write e.g. 127.0.0.1:8080`,
	}, {
		name: "api listen without a port",
		text: "api:\n  listen: 127.0.0.1\n",
		want: `upfd.yaml:2: api.listen: "127.0.0.1" has no port; write it as 127.0.0.1:8080`,
	}, {
		name: "api listen without an address",
		text: "api:\n  listen: \":8080\"\n",
		want: `upfd.yaml:2: api.listen: ":8080" has no address; write 0.0.0.0:8080 for every IPv4 address, [::]:8080 for every address, or 127.0.0.1:8080 for this host alone`,
	}, {
		name: "api listen on port 0",
		text: "api:\n  listen: 127.0.0.1:0\n",
		want: `upfd.yaml:2: api.listen: "127.0.0.1:0" has port 0; use a fixed port, normally 8080`,
	}, {
		name: "metrics listen on a named port",
		text: "metrics:\n  listen: 127.0.0.1:prometheus\n",
		want: `upfd.yaml:2: metrics.listen: "127.0.0.1:prometheus" has port "prometheus"; want 1 to 65535, normally 9090`,
	}, {
		name: "metrics listen is not an address",
		text: "metrics:\n  listen: everywhere\n",
		want: `upfd.yaml:2: metrics.listen: "everywhere" is not an address and port; write it as 127.0.0.1:9090, or "" for no server`,
	}, {
		name: "metrics on the API's port",
		text: "api:\n  listen: 0.0.0.0:8080\nmetrics:\n  listen: 0.0.0.0:8080\n",
		want: `upfd.yaml:4: metrics.listen: 0.0.0.0:8080 is also api.listen (line 2); give each server its own port, e.g. 8080 for the API and 9090 for metrics`,
	}, {
		name: "api on the metrics' default port",
		text: "api:\n  listen: 127.0.0.1:9090\n",
		want: `upfd.yaml:2: api.listen: 127.0.0.1:9090 is also metrics.listen; give each server its own port, e.g. 8080 for the API and 9090 for metrics`,
	}, {
		name: "api token with a space, not shown",
		text: "api:\n  token: \"s3cret s3cret\"\n",
		want: `upfd.yaml:2: api.token: has a space, a control character or a character beyond ASCII, which an HTTP header cannot carry; use e.g. openssl rand -hex 32`,
	}, {
		name: "api token is a list",
		text: "api:\n  token: [a, b]\n",
		want: `upfd.yaml:2: api.token: got a list; want a token such as one from openssl rand -hex 32`,
	}, {
		name: "api is a single value",
		text: "api: 127.0.0.1:8080\n",
		want: `upfd.yaml:1: api: got a single value; want api with keys listen and token`,
	}, {
		name: "unknown api key",
		text: "api:\n  address: 127.0.0.1:8080\n",
		want: `upfd.yaml:2: api.address: unknown key; api takes listen or token`,
	}, {
		name: "unknown metrics key",
		text: "metrics:\n  path: /metrics\n",
		want: `upfd.yaml:2: metrics.path: unknown key; metrics takes listen`,
	}, {
		name: "log level in capitals",
		text: "log:\n  level: DEBUG\n",
		want: `upfd.yaml:2: log.level: "DEBUG" is not a level; want debug, info, warn or error`,
	}, {
		name: "log format unknown",
		text: "log:\n  format: logfmt\n",
		want: `upfd.yaml:2: log.format: "logfmt" is not a format; want text or json`,
	}, {
		name: "unknown log key",
		text: "log:\n  file: /var/log/upfd.log\n",
		want: `upfd.yaml:2: log.file: unknown key; log takes level or format`,
	}, {
		name: "IPv6 pool of one /64",
		text: "dnns:\n  - {name: internet, pools: [2001:db8:45::/64]}\n",
		want: `upfd.yaml:2: dnns[0].pools[0]: 2001:db8:45::/64 holds no UE prefix: each UE takes a /64 of its own and a pool's first /64 stays unused; write a shorter prefix, e.g. 2001:db8:45::/48`,
	}, {
		name: "IPv6 pool with host bits",
		text: "dnns:\n  - {name: internet, pools: [10.45.0.0/16, 2001:db8:45::1/48]}\n",
		want: `upfd.yaml:2: dnns[0].pools[1]: 2001:db8:45::1/48 has host bits set; write 2001:db8:45::/48`,
	}, {
		name: "IPv6 pools overlap across dnns",
		text: "dnns:\n  - {name: internet, pools: [10.45.0.0/16, 2001:db8:45::/48]}\n  - {name: ims, pools: [10.46.0.0/16, 2001:db8:45:100::/56]}\n",
		want: `upfd.yaml:3: dnns[1].pools[1]: 2001:db8:45:100::/56 of dnn "ims" overlaps 2001:db8:45::/48 of dnn "internet" (line 2); make the pools disjoint`,
	}, {
		name: "IPv6 pool without a length",
		text: "dnns:\n  - {name: internet, pools: [2001:db8:45::]}\n",
		want: `upfd.yaml:2: dnns[0].pools[0]: "2001:db8:45::" has no length; write it as a prefix, e.g. 10.45.0.0/16`,
	}, {
		name: "IPv4 pool of one address",
		text: "dnns:\n  - {name: internet, pools: [10.45.0.7/32]}\n",
		want: `upfd.yaml:2: dnns[0].pools[0]: 10.45.0.7/32 holds no UE address: a pool's first address stays unused; write a shorter prefix, e.g. 10.45.0.0/24`,
	}, {
		name: "state fsync not a boolean",
		text: "state_fsync: yes\n",
		want: `upfd.yaml:1: state_fsync: "yes" is not true or false`,
	}, {
		name: "state file relative",
		text: "pin_path: /sys/fs/bpf/upfd\nstate_file: upfd/state.journal\n",
		want: `upfd.yaml:2: state_file: "upfd/state.journal" is relative; write an absolute path, e.g. /var/lib/upfd/state.journal`,
	}, {
		name: "state file on bpffs",
		text: "pin_path: /sys/fs/bpf/upfd\nstate_file: /sys/fs/bpf/upfd/state\n",
		want: `upfd.yaml:2: state_file: "/sys/fs/bpf/upfd/state" is on the BPF file system, which holds no files of ours; write e.g. /var/lib/upfd/state.journal`,
	}, {
		name: "state file empty while pinned",
		text: "pin_path: /sys/fs/bpf/upfd\nstate_file: \"\"\n",
		want: `upfd.yaml:2: state_file: empty, but pin_path is set, and a pinned upfd saves its N4 state there; write a file such as /var/lib/upfd/state.journal`,
	}, {
		name: "state file not written plainly",
		text: "pin_path: /sys/fs/bpf/upfd\nstate_file: /var/lib//upfd/state.journal\n",
		want: `upfd.yaml:2: state_file: "/var/lib//upfd/state.journal" is not written plainly; write /var/lib/upfd/state.journal`,
	}, {
		name: "first problem in file order",
		text: "xdp_mode: skb\nmax_sessions: 0\n",
		want: `upfd.yaml:1: xdp_mode: "skb" is not a mode; want native, generic or auto`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("upfd.yaml", []byte(tc.text))
			if err == nil {
				t.Fatalf("no error; got %+v", c)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

// TestValidateKeepsLines checks that Validate, run again after Parse, still
// names lines, and that a default (absent from the file) has none.
func TestValidateKeepsLines(t *testing.T) {
	c, err := Parse("upfd.yaml", []byte("node_id: 198.18.4.2\nmax_sessions: 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.MaxSessions = -1
	want := "upfd.yaml:2: max_sessions: -1 is out of range; want 1 to 16000000"
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	c.MaxSessions = 5
	c.XDPMode = "skb"
	want = `upfd.yaml: xdp_mode: "skb" is not a mode; want native, generic or auto`
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestValidateBuiltInCode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c *Config)
		want   string
	}{{
		name:   "n9 without address",
		change: func(c *Config) { c.Interfaces = append(c.Interfaces, Interface{Name: "n9", Role: RoleN9}) },
		want:   `interfaces[2].address: n9 interface "n9" has no address; add address: with its GTP-U IP, e.g. 198.18.3.2`,
	}, {
		name:   "zero values of the N4 timers",
		change: func(c *Config) { c.PFCP.T1, c.PFCP.N1 = 0, 0 },
		want:   `pfcp.t1: 0s would send every request again without waiting for its response; want a duration such as 3s`,
	}, {
		name:   "associate left invalid",
		change: func(c *Config) { c.PFCP.Associate = []netip.AddrPort{{}} },
		want:   `pfcp.associate[0]: not an IP address; write the SMF's N4 address, e.g. 198.18.4.1 or 198.18.4.1:8805`,
	}, {
		name:   "total below one session's",
		change: func(c *Config) { c.Buffer = Buffer{PacketsPerSession: 100, TotalPackets: 10} },
		want:   `buffer.total_packets: 10 is less than buffer.packets_per_session, 100; raise it to at least 100 or lower buffer.packets_per_session`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.change(c)
			if err := c.Validate(); err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "upfd.yaml")
	if err := os.WriteFile(path, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	c, rest, err := Load([]string{"--config", path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.XDPMode != XDPNative || len(c.PFCP.Peers) != 1 || len(rest) != 0 {
		t.Errorf("got %+v, rest %q", c, rest)
	}
}

func TestLoadNamesThePathInErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "upfd.yaml")
	if err := os.WriteFile(path, []byte("xdp_mode: skb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := path + `:1: xdp_mode: "skb" is not a mode; want native, generic or auto`
	if _, _, err := Load([]string{"--config", path}, nil); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "upfd.yaml")
	_, _, err := Load([]string{"--config=" + path}, nil)
	want := "read " + path + ": no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v is not fs.ErrNotExist", err)
	}
}
