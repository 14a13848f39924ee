package config

import (
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// example is the file the documentation shows.
const example = `node_id: 198.18.4.2
pfcp:
  listen: 198.18.4.2:8805
  peers: [198.18.4.1]          # empty or absent: any peer (upfd warns at start)
interfaces:
  - {name: n3, role: n3, address: 198.18.3.2}
  - {name: n6, role: n6}
dnns:
  - {name: internet, pools: [10.45.0.0/16]}
teid_range: 0x100-0xffffff
max_sessions: 100000
xdp_mode: native               # native | generic
`

// withoutSource drops the key positions so that configs compare by value.
func withoutSource(c *Config) *Config {
	copied := *c
	copied.src = nil
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

func TestParseExample(t *testing.T) {
	want := &Config{
		NodeID: "198.18.4.2",
		PFCP: PFCP{
			Listen: netip.MustParseAddrPort("198.18.4.2:8805"),
			Peers:  []netip.Addr{netip.MustParseAddr("198.18.4.1")},
		},
		Interfaces: []Interface{
			{Name: "n3", Role: "n3", Address: netip.MustParseAddr("198.18.3.2")},
			{Name: "n6", Role: "n6"},
		},
		DNNs: []DNN{
			{Name: "internet", Pools: []netip.Prefix{netip.MustParsePrefix("10.45.0.0/16")}},
		},
		TEIDRange:   TEIDRange{First: 0x100, Last: 0xffffff},
		MaxSessions: 100000,
		XDPMode:     "native",
	}
	if got := mustParse(t, example); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
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
	want.PFCP.Peers = []netip.Addr{netip.MustParseAddr("198.18.4.1"), netip.MustParseAddr("2001:db8::1")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
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
		want: `upfd.yaml:1: got a list; want keys such as node_id: and pfcp:`,
	}, {
		name: "unknown top-level key",
		text: "max_sessions: 5\nnodeid: 198.18.4.2\n",
		want: `upfd.yaml:2: nodeid: unknown key; want node_id, pfcp, interfaces, dnns, teid_range, max_sessions or xdp_mode`,
	}, {
		name: "unknown nested key",
		text: "pfcp:\n  listen: 198.18.4.2:8805\n  peer: [198.18.4.1]\n",
		want: `upfd.yaml:3: pfcp.peer: unknown key; want listen or peers`,
	}, {
		name: "unknown interface key",
		text: "interfaces:\n  - name: n3\n    roll: n3\n",
		want: `upfd.yaml:3: interfaces[0].roll: unknown key; want name, role or address`,
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
		want: `upfd.yaml:2: pfcp.peers: got a single value; want a list of addresses such as [198.18.4.1]`,
	}, {
		name: "single value for a mapping",
		text: "pfcp: 198.18.4.2:8805\n",
		want: `upfd.yaml:1: pfcp: got a single value; want a mapping with keys listen and peers`,
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
		want: `upfd.yaml:4: pfcp.peers[1]: "smf.local" is not an IPv4 or IPv6 address; write the SMF's N4 address, e.g. 198.18.4.1`,
	}, {
		name: "peer with port",
		text: "pfcp:\n  peers: [198.18.4.1:8805]\n",
		want: `upfd.yaml:2: pfcp.peers[0]: "198.18.4.1:8805" has a port; write the address alone, 198.18.4.1`,
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
		want: `upfd.yaml:1: max_sessions: "1e5" is not a whole number; write digits only, e.g. 100000`,
	}, {
		name: "xdp_mode",
		text: "xdp_mode: driver\n",
		want: `upfd.yaml:1: xdp_mode: "driver" is not a mode; want native or generic`,
	}, {
		name: "first problem in file order",
		text: "xdp_mode: skb\nmax_sessions: 0\n",
		want: `upfd.yaml:1: xdp_mode: "skb" is not a mode; want native or generic`,
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
	want = `upfd.yaml: xdp_mode: "skb" is not a mode; want native or generic`
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestValidateBuiltInCode(t *testing.T) {
	c := Default()
	c.Interfaces = append(c.Interfaces, Interface{Name: "n9", Role: RoleN9})
	want := `interfaces[2].address: n9 interface "n9" has no address; add address: with its GTP-U IP, e.g. 198.18.3.2`
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "upfd.yaml")
	if err := os.WriteFile(path, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.XDPMode != XDPNative || len(c.PFCP.Peers) != 1 {
		t.Errorf("got %+v", c)
	}
}

func TestLoadNamesThePathInErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "upfd.yaml")
	if err := os.WriteFile(path, []byte("xdp_mode: skb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := path + `:1: xdp_mode: "skb" is not a mode; want native or generic`
	if _, err := Load(path); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "upfd.yaml")
	_, err := Load(path)
	want := "read " + path + ": no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v is not fs.ErrNotExist", err)
	}
}
