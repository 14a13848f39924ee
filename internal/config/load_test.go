package config

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// writeFile writes text to upfd.yaml in a new directory and returns its path.
func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "upfd.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadPrecedence pins down the order of the sources: flags over
// variables over the file over the defaults, for a single value and for a
// list, and which file is read.
func TestLoadPrecedence(t *testing.T) {
	file := writeFile(t, "pfcp:\n  t1: 4s\n  peers: [198.18.4.1]\n")
	other := writeFile(t, "pfcp:\n  t1: 7s\n")
	for _, tc := range []struct {
		name        string
		args, env   []string
		t1          time.Duration
		peers       string
		wantSources []string
	}{
		{"defaults alone", nil, nil, 3 * time.Second, "[]", nil},
		{"the file over the defaults", []string{"--config", file}, nil, 4 * time.Second, "[198.18.4.1]", []string{file}},
		{"a variable over the file", []string{"--config", file}, []string{"UPFD_PFCP_T1=5s"}, 5 * time.Second, "[198.18.4.1]",
			[]string{file, "env UPFD_PFCP_T1"}},
		{"a flag over a variable", []string{"--config", file, "--pfcp.t1=6s"}, []string{"UPFD_PFCP_T1=5s"}, 6 * time.Second, "[198.18.4.1]",
			[]string{file, "env UPFD_PFCP_T1", "flag --pfcp.t1"}},
		{"a flag over the defaults", []string{"--pfcp.t1", "6s"}, nil, 6 * time.Second, "[]", []string{"flag --pfcp.t1"}},
		{"a variable's list replaces the file's", []string{"--config", file}, []string{"UPFD_PFCP_PEERS=[198.18.4.3, 198.18.4.4]"},
			4 * time.Second, "[198.18.4.3, 198.18.4.4]", []string{file, "env UPFD_PFCP_PEERS"}},
		{"a variable's list of one over the defaults", nil, []string{"UPFD_PFCP_PEERS=198.18.4.3"}, 3 * time.Second, "[198.18.4.3]", []string{"env UPFD_PFCP_PEERS"}},
		{"a flag's list replaces a variable's", []string{"--pfcp.peers=198.18.4.5,198.18.4.6"}, []string{"UPFD_PFCP_PEERS=198.18.4.3"},
			3 * time.Second, "[198.18.4.5, 198.18.4.6]", []string{"env UPFD_PFCP_PEERS", "flag --pfcp.peers"}},
		{"an empty list empties the file's", []string{"--config", file, "--pfcp.peers="}, nil, 4 * time.Second, "[]",
			[]string{file, "flag --pfcp.peers"}},
		{"UPFD_CONFIG names the file", nil, []string{"UPFD_CONFIG=" + file}, 4 * time.Second, "[198.18.4.1]", []string{file}},
		{"--config over UPFD_CONFIG", []string{"--config=" + other}, []string{"UPFD_CONFIG=" + file}, 7 * time.Second, "[]", []string{other}},
		{"variables of other programs are no concern", nil, []string{"PATH=/usr/bin", "UPFDX=1", "upfd_pfcp_t1=9s"}, 3 * time.Second, "[]", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rest, err := Load(tc.args, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if c.PFCP.T1 != tc.t1 || peersText(c.PFCP.Peers) != tc.peers || len(rest) != 0 {
				t.Errorf("got t1 %v, peers %s, rest %q; want %v, %s", c.PFCP.T1, peersText(c.PFCP.Peers), rest, tc.t1, tc.peers)
			}
			if got := c.Sources(); !slices.Equal(got, tc.wantSources) {
				t.Errorf("sources %q, want %q", got, tc.wantSources)
			}
		})
	}
}

// TestLoadValues pins down how the text of variables and flags is read.
func TestLoadValues(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args, env []string
		want      func(c *Config)
	}{{
		name: "interfaces as YAML in a variable",
		env:  []string{"UPFD_INTERFACES=[{name: eth1, role: n3, address: 198.18.3.2, mtu: 9000}, {name: eth2, role: n6}]"},
		want: func(c *Config) {
			c.Interfaces = []Interface{{Name: "eth1", Role: RoleN3, Address: netip.MustParseAddr("198.18.3.2"), MTU: 9000}, {Name: "eth2", Role: RoleN6}}
		},
	}, {
		name: "IPv6 pools as YAML in a flag",
		args: []string{"--dnns=[{name: internet, pools: [10.45.0.0/16, 2001:db8:45::/48]}, {name: ims, pools: [2001:db8:46::/48]}]"},
		want: func(c *Config) {
			c.DNNs = []DNN{
				{Name: "internet", Pools: []netip.Prefix{netip.MustParsePrefix("10.45.0.0/16"), netip.MustParsePrefix("2001:db8:45::/48")}},
				{Name: "ims", Pools: []netip.Prefix{netip.MustParsePrefix("2001:db8:46::/48")}},
			}
		},
	}, {
		name: "a list written plainly, with spaces",
		env:  []string{"UPFD_PFCP_PEERS= 198.18.4.1, 2001:db8::1 "},
		want: func(c *Config) {
			c.PFCP.Peers = peers("198.18.4.1", "2001:db8::1")
		},
	}, {
		name: "a list of one, and an IPv6 address with a port quoted",
		args: []string{"--pfcp.associate", `["[2001:db8::1]:8806"]`, "--pfcp.peers=[2001:db8::1]"},
		want: func(c *Config) {
			c.PFCP.Peers = peers("2001:db8::1")
			c.PFCP.Associate = []netip.AddrPort{netip.MustParseAddrPort("[2001:db8::1]:8806")}
		},
	}, {
		name: "a token taken as written, not as YAML",
		env:  []string{"UPFD_API_TOKEN=#x:&y*z!"},
		want: func(c *Config) { c.API.Token = "#x:&y*z!" },
	}, {
		name: "a value's surrounding spaces and newline trimmed",
		env:  []string{"UPFD_API_TOKEN=9f2c0e51d4\n"},
		want: func(c *Config) { c.API.Token = "9f2c0e51d4" },
	}, {
		name: "quotes read as YAML's",
		args: []string{`--node_id="upf-1.example.net"`, `--api.listen=''`, `--pin_path=""`},
		want: func(c *Config) { c.NodeID, c.API.Listen = "upf-1.example.net", netip.AddrPort{} },
	}, {
		name: "empty turns a server off",
		env:  []string{"UPFD_METRICS_LISTEN="},
		want: func(c *Config) { c.Metrics.Listen = netip.AddrPort{} },
	}, {
		name: "--log-level sets log.level",
		args: []string{"--log-level=debug", "-log.format", "json"},
		want: func(c *Config) { c.Log = Log{Level: LevelDebug, Format: FormatJSON} },
	}, {
		name: "one dash will do",
		args: []string{"-max_sessions=5", "-xdp_mode", "auto"},
		want: func(c *Config) { c.MaxSessions, c.XDPMode = 5, XDPAuto },
	}, {
		name: "Kubernetes' service links are skipped",
		env: []string{"UPFD_SERVICE_HOST=10.96.0.10", "UPFD_SERVICE_PORT=8805", "UPFD_SERVICE_PORT_PFCP=8805",
			"UPFD_PORT=udp://10.96.0.10:8805", "UPFD_PORT_8805_UDP=udp://10.96.0.10:8805", "UPFD_PORT_8805_UDP_PROTO=udp",
			"UPFD_PORT_8805_UDP_PORT=8805", "UPFD_PORT_8805_UDP_ADDR=10.96.0.10", "UPFD_METRICS_SERVICE_HOST=10.96.0.11",
			"UPFD_METRICS_PORT=tcp://10.96.0.11:9090", "UPFD_MAX_SESSIONS=7"},
		want: func(c *Config) { c.MaxSessions = 7 },
	}, {
		name: "of a variable given twice, the last",
		env:  []string{"UPFD_MAX_SESSIONS=7", "UPFD_MAX_SESSIONS=8"},
		want: func(c *Config) { c.MaxSessions = 8 },
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Load(tc.args, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			want := Default()
			tc.want(want)
			if got := withoutSource(c); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestLoadRest(t *testing.T) {
	for _, tc := range []struct {
		args, rest []string
	}{
		{[]string{"--pfcp.t1=2s", "extra", "--pfcp.n1=2"}, []string{"extra", "--pfcp.n1=2"}},
		{[]string{"--pfcp.t1=2s", "--", "--pfcp.n1=2"}, []string{"--pfcp.n1=2"}},
		{[]string{"-"}, []string{"-"}},
		{nil, nil},
	} {
		_, rest, err := Load(tc.args, nil)
		if err != nil || !slices.Equal(rest, tc.rest) {
			t.Errorf("%q: rest %q, %v; want %q", tc.args, rest, err, tc.rest)
		}
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"--pfcp.t1=2s", "-help"}} {
		if _, _, err := Load(args, nil); err != ErrHelp {
			t.Errorf("%q: got %v, want ErrHelp", args, err)
		}
	}
}

// TestLoadErrors is a table of bad variables and flags, and of problems
// across sources, with the exact error each gets.
func TestLoadErrors(t *testing.T) {
	file := writeFile(t, "pfcp:\n  peers: [198.18.4.1]\n  associate: [198.18.4.1]\n")
	badFile := writeFile(t, "pfcp:\n  t1: 3\n")
	for _, tc := range []struct {
		name      string
		args, env []string
		want      string
	}{{
		name: "variable with a bad value",
		env:  []string{"UPFD_PFCP_T1=3"},
		want: `env UPFD_PFCP_T1: "3" has no unit; write it with one, e.g. 3s or 3ms`,
	}, {
		name: "variable with an impossible value",
		env:  []string{"UPFD_PFCP_T1=0s"},
		want: `env UPFD_PFCP_T1: 0s would send every request again without waiting for its response; want a duration such as 3s`,
	}, {
		name: "variable misspelt",
		env:  []string{"UPFD_PFCP_LISTN=198.18.4.2:8805"},
		want: `env UPFD_PFCP_LISTN: no such variable; did you mean UPFD_PFCP_LISTEN? upfd --help lists them all`,
	}, {
		name: "variable unknown",
		env:  []string{"UPFD_VERBOSE=1"},
		want: `env UPFD_VERBOSE: no such variable; upfd --help lists the UPFD_ variables upfd reads: rename or unset this one`,
	}, {
		name: "variable for a section",
		env:  []string{"UPFD_PFCP={t1: 2s}"},
		want: `env UPFD_PFCP: pfcp is a section; set its keys one by one, e.g. UPFD_PFCP_LISTEN`,
	}, {
		name: "variable that looks like a service link but is not",
		env:  []string{"UPFD_API_PORT=9000"},
		want: `env UPFD_API_PORT: no such variable; upfd --help lists the UPFD_ variables upfd reads: rename or unset this one`,
	}, {
		name: "variable naming no file",
		env:  []string{"UPFD_CONFIG="},
		want: `env UPFD_CONFIG: empty; name a YAML file, e.g. /etc/upfd/upfd.yaml, or unset it`,
	}, {
		name: "variable with a bad item",
		env:  []string{"UPFD_INTERFACES=[{name: n3, role: n3, address: 198.18.3.2}, {name: n6, role: n4}]"},
		want: `env UPFD_INTERFACES: interfaces[1].role: "n4" is not a role; want n3, n6 or n9`,
	}, {
		name: "variable with a missing item",
		env:  []string{"UPFD_INTERFACES=[{name: n3, role: n3, address: 198.18.3.2}]"},
		want: `env UPFD_INTERFACES: no n6 interface; add one with role: n6`,
	}, {
		name: "variable with bad YAML",
		env:  []string{"UPFD_INTERFACES=[{name: n3, role: n3"},
		want: `env UPFD_INTERFACES: invalid YAML: did not find expected ',' or '}'; write it in YAML's flow style on one line, e.g. [{name: n3, role: n3, address: 198.18.3.2}, {name: n6, role: n6}]`,
	}, {
		name: "flag with bad YAML in a list of addresses",
		args: []string{"--pfcp.peers=[198.18.4.1"},
		want: `flag --pfcp.peers: invalid YAML: did not find expected ',' or ']'; write it in YAML's flow style on one line, e.g. [198.18.4.1, 198.18.4.3]`,
	}, {
		name: "flag with an unclosed quote",
		args: []string{`--node_id="upf-1`},
		want: `flag --node_id: "\"upf-1" is neither an IP address nor a valid FQDN: label "\"upf-1" has '"'; use only letters, digits and '-'`,
	}, {
		name: "variable with an unknown key in an item",
		env:  []string{"UPFD_DNNS=[{name: internet, pool: [10.45.0.0/16]}]"},
		want: `env UPFD_DNNS: dnns[0].pool: unknown key; did you mean pools? a dnn takes name or pools`,
	}, {
		name: "variable with a mapping for a list",
		env:  []string{"UPFD_DNNS={name: internet}"},
		want: `env UPFD_DNNS: got a mapping; want a list of DNNs, each with name and pools`,
	}, {
		name: "variable's plain list with a bad item",
		env:  []string{"UPFD_PFCP_PEERS=198.18.4.1,smf.local"},
		want: `env UPFD_PFCP_PEERS: pfcp.peers[1]: "smf.local" is neither an IP address nor a network; write the SMF's N4 address, e.g. 198.18.4.1, or its network, e.g. 198.18.4.0/24`,
	}, {
		name: "flag with a bad value",
		args: []string{"--pfcp.t1=3"},
		want: `flag --pfcp.t1: "3" has no unit; write it with one, e.g. 3s or 3ms`,
	}, {
		name: "flag misspelt",
		args: []string{"--pfcp.lisen=198.18.4.2:8805"},
		want: `flag --pfcp.lisen: no such flag; did you mean --pfcp.listen? upfd --help lists them all`,
	}, {
		name: "flag with dashes for underscores",
		args: []string{"--max-sessions", "5"},
		want: `flag --max-sessions: no such flag; did you mean --max_sessions? upfd --help lists them all`,
	}, {
		name: "flag unknown",
		args: []string{"--verbose=true"},
		want: `flag --verbose: no such flag; upfd --help lists them all`,
	}, {
		name: "flag for a section",
		args: []string{"--api={listen: 127.0.0.1:8080}"},
		want: `flag --api: api is a section; set its keys one by one, e.g. --api.listen`,
	}, {
		name: "flag without its value",
		args: []string{"--pfcp.t1"},
		want: `flag --pfcp.t1: needs a value, e.g. --pfcp.t1=3s`,
	}, {
		name: "flag followed by a flag",
		args: []string{"--pfcp.listen", "--pfcp.t1=2s"},
		want: `flag --pfcp.listen: needs a value, e.g. --pfcp.listen=198.18.4.2:8805`,
	}, {
		name: "flag given twice",
		args: []string{"--pfcp.t1=2s", "--pfcp.t1=3s"},
		want: `flag --pfcp.t1: given twice; keep one`,
	}, {
		name: "flag given twice, once by its old name",
		args: []string{"--log-level=debug", "--log.level=info"},
		want: `flag --log.level: given twice, also as --log-level; keep one`,
	}, {
		name: "config given twice",
		args: []string{"--config", file, "--config", file},
		want: `flag --config: given twice; keep one`,
	}, {
		name: "config empty",
		args: []string{"--config="},
		want: `flag --config: empty; name a YAML file, e.g. --config /etc/upfd/upfd.yaml`,
	}, {
		name: "old flag with a bad level",
		args: []string{"--log-level=verbose"},
		want: `flag --log-level: "verbose" is not a level; want debug, info, warn or error`,
	}, {
		name: "flag over the datapath's PDRs",
		args: []string{"--max_pdrs_per_session=64"},
		want: `flag --max_pdrs_per_session: 64 is out of range; want 1 to 32`,
	}, {
		name: "flag with a token that is not shown",
		args: []string{"--api.token=s3cret\tvalue"},
		want: `flag --api.token: has a space, a control character or a character beyond ASCII, which an HTTP header cannot carry; use e.g. openssl rand -hex 32`,
	}, {
		name: "flag with a list for a single value",
		args: []string{"--xdp_mode=[native]"},
		want: `flag --xdp_mode: "[native]" is not a mode; want native, generic or auto`,
	}, {
		name: "flag whose value conflicts with the file's",
		args: []string{"--config", file, "--pfcp.associate=198.18.4.9"},
		want: `flag --pfcp.associate: pfcp.associate[0]: 198.18.4.9 is not in pfcp.peers (line 2), so upfd would refuse its requests; add 198.18.4.9 there`,
	}, {
		name: "file whose value conflicts with a variable's",
		args: []string{"--config", file},
		env:  []string{"UPFD_PFCP_PEERS=198.18.4.9"},
		want: file + `:3: pfcp.associate[0]: 198.18.4.1 is not in pfcp.peers (env UPFD_PFCP_PEERS), so upfd would refuse its requests; add 198.18.4.1 there`,
	}, {
		name: "flag that collides with a default",
		args: []string{"--metrics.listen=127.0.0.1:8080"},
		want: `flag --metrics.listen: 127.0.0.1:8080 is also api.listen; give each server its own port, e.g. 8080 for the API and 9090 for metrics`,
	}, {
		name: "the file's problem before a variable's",
		args: []string{"--config", badFile},
		env:  []string{"UPFD_PFCP_N1=0"},
		want: badFile + `:2: pfcp.t1: "3" has no unit; write it with one, e.g. 3s or 3ms`,
	}, {
		name: "a variable's problem before a flag's",
		args: []string{"--pfcp.n1=0"},
		env:  []string{"UPFD_PFCP_HEARTBEAT_RETRIES=0"},
		want: `env UPFD_PFCP_HEARTBEAT_RETRIES: 0 is out of range; want 1 or more`,
	}, {
		name: "an unknown flag before all else",
		args: []string{"--config", badFile, "--pfcp.tl=2s"},
		env:  []string{"UPFD_PFCP_TL=2s"},
		want: `flag --pfcp.tl: no such flag; did you mean --pfcp.t1? upfd --help lists them all`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Load(tc.args, tc.env)
			if err == nil {
				t.Fatalf("no error; got %+v", c)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

// TestEverySettingRoundTrips sets each key by flag and by variable to its
// default as --help shows it, and gets the defaults back: the names, the
// shown values and the readers agree.
func TestEverySettingRoundTrips(t *testing.T) {
	def := Default()
	for _, s := range settings {
		text := s.show(def)
		for _, src := range []struct{ args, env []string }{
			{args: []string{s.flag() + "=" + text}},
			{env: []string{s.env() + "=" + text}},
		} {
			c, _, err := Load(src.args, src.env)
			if err != nil {
				t.Errorf("%s: %v", s.path, err)
				continue
			}
			if diff := differences(c, def); diff != "" {
				t.Errorf("%s=%s: %s", s.path, text, diff)
			}
		}
	}
}

// differences says which settings of got and want differ, as --help would
// show them; the settings cover every key.
func differences(got, want *Config) string {
	var diff []string
	for _, s := range settings {
		if g, w := s.show(got), s.show(want); g != w {
			diff = append(diff, fmt.Sprintf("%s is %s, want %s", s.path, g, w))
		}
	}
	return strings.Join(diff, "; ")
}

// TestSettingsCoverTheFile checks that every key of the file that holds a
// value or a whole list has a variable and a flag, and that no two
// variables share a name.
func TestSettingsCoverTheFile(t *testing.T) {
	var want []string
	for _, key := range keys {
		if !strings.Contains(key, "[]") && !slices.Contains(sections, key) {
			want = append(want, key)
		}
	}
	var got []string
	envs := map[string]string{}
	for _, s := range settings {
		got = append(got, s.path)
		if other, taken := envs[s.env()]; taken {
			t.Errorf("%s and %s are both %s", other, s.path, s.env())
		}
		envs[s.env()] = s.path
		if isServiceLink(s.env(), "tcp://10.0.0.1:1") {
			t.Errorf("%s looks like a Kubernetes service link", s.env())
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("settings %q\nkeys     %q", got, want)
	}
}

// TestUsage checks that --help shows every flag with its default and its
// variable.
func TestUsage(t *testing.T) {
	var b bytes.Buffer
	Usage(&b)
	for _, line := range []string{
		"  --config FILE  (UPFD_CONFIG)\n",
		"  --pfcp.t1=3s  (UPFD_PFCP_T1)\n",
		"  --pfcp.peers=[]  (UPFD_PFCP_PEERS)\n",
		"  --gtpu.echo_interval=1m  (UPFD_GTPU_ECHO_INTERVAL)\n",
		"  --interfaces=[{name: n3, role: n3, address: 198.18.3.2}, {name: n6, role: n6}]  (UPFD_INTERFACES)\n",
		"  --api.token=\"\"  (UPFD_API_TOKEN)\n",
		"  --log.level=info  (UPFD_LOG_LEVEL; or --log-level)\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("usage has no line %q:\n%s", line, b.String())
		}
	}
	for _, s := range settings {
		if !strings.Contains(b.String(), "  "+s.flag()+"=") {
			t.Errorf("usage leaves out %s", s.flag())
		}
	}
}

// TestMaxPDRsLimitIsTheDatapaths keeps the limit on max_pdrs_per_session
// in step with what the datapath's PDR lists hold.
func TestMaxPDRsLimitIsTheDatapaths(t *testing.T) {
	if MaxPDRsLimit != datapath.MaxPDRs {
		t.Errorf("MaxPDRsLimit is %d, datapath.MaxPDRs %d", MaxPDRsLimit, datapath.MaxPDRs)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"pfcp.lisen", "pfcp.listen", 1}, {"t1", "n1", 1}, {"kitten", "sitting", 3}} {
		if got := yamlfile.EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("%q, %q: got %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
