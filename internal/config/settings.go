package config

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// setting is a key that an environment variable and a flag set as well as
// the file: every key that holds a value or a list. Sections (pfcp, api)
// are set key by key. Its entry in settings is the key's one declaration:
// its path, its use, where it goes in a Config and how it is read, shown
// and checked.
type setting struct {
	path  string // key path, e.g. "pfcp.t1"
	usage string // what it is, for --help
	keyValue
}

// keyValue is how a key's value is read into a Config, written back as the
// file would have it (for --help's defaults), and checked alone.
type keyValue struct {
	kind  settingKind // how a variable's or flag's text is read
	read  func(d *decoder, n *yaml.Node, path string, c *Config) error
	show  func(c *Config) string
	check func(v *validator, path string, c *Config) // nil: Validate checks it with others
}

// scalar declares a key of one value: where it goes in a Config, what to
// write (shape), and how to read and show the value.
func scalar[T any](at func(*Config) *T, shape string, parse func(string) (T, error), show func(T) string) keyValue {
	return keyValue{
		kind: single,
		read: func(d *decoder, n *yaml.Node, path string, c *Config) error {
			return yamlfile.Value(d, at(c), shape, parse)(n, path)
		},
		show: func(c *Config) string { return show(*at(c)) },
	}
}

// count declares a key of a whole number in r. Validate checks the range,
// so that problems come in file order whichever check finds them.
func count(at func(*Config) *int, shape string, r yamlfile.Range) keyValue {
	kv := scalar(at, shape, func(s string) (int, error) { return yamlfile.ParseWhole(s, r.String()) }, strconv.Itoa)
	kv.check = func(v *validator, path string, c *Config) {
		if n := *at(c); !r.Holds(n) {
			v.add(path, "%d is out of range; want %s", n, r)
		}
	}
	return kv
}

// text declares a key of text taken as written; Validate judges it.
func text(at func(*Config) *string, shape string) keyValue {
	return scalar(at, shape, yamlfile.AsIs, yamlString)
}

// duration declares a key of a duration; example is one to suggest.
func duration(at func(*Config) *time.Duration, example string) keyValue {
	return scalar(at, "a duration such as "+example, yamlfile.ParseDuration(example), durationText)
}

// list declares a key of a list of single values.
func list[T any](at func(*Config) *[]T, shape, itemShape string, parse func(string) (T, error), show func([]T) string) keyValue {
	return keyValue{
		kind: singles,
		read: func(d *decoder, n *yaml.Node, path string, c *Config) (err error) {
			*at(c), err = yamlfile.List(d, n, path, shape, itemShape, parse)
			return err
		},
		show: func(c *Config) string { return show(*at(c)) },
	}
}

// items declares a key of a list of mappings, which read reads.
func items[T any](at func(*Config) *[]T, read func(*decoder, *yaml.Node, string, *[]T) error, show func([]T) string) keyValue {
	return keyValue{
		kind: structured,
		read: func(d *decoder, n *yaml.Node, path string, c *Config) error { return read(d, n, path, at(c)) },
		show: func(c *Config) string { return show(*at(c)) },
	}
}

// settingKind says how the text of a variable or flag is read.
type settingKind int

const (
	// single is one value, taken as written (spaces around it trimmed);
	// quotes around all of it are YAML's, so "" is empty.
	single settingKind = iota
	// singles is a list of single values in YAML's flow style, [a, b], or
	// plainly a,b, or one value alone.
	singles
	// structured is YAML, in flow style on one line: a list of mappings.
	structured
)

// envPrefix starts the name of every variable upfd reads.
const envPrefix = "UPFD_"

// EnvConfig is the variable that names the configuration file, as --config does.
const EnvConfig = envPrefix + "CONFIG"

// env is the variable that sets s: UPFD_ and its path in capitals, each '.'
// a '_': UPFD_PFCP_T1.
func (s *setting) env() string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(s.path, ".", "_"))
}

// flag is the flag that sets s: its path, --pfcp.t1.
func (s *setting) flag() string { return "--" + s.path }

// settings are every key that variables and flags set, in the file's order.
var settings = []setting{
	{"node_id", "PFCP Node ID: an IP address or an FQDN",
		text(func(c *Config) *string { return &c.NodeID }, "an address or FQDN such as 198.18.4.2")},
	{"pfcp.listen", "where upfd takes PFCP (UDP), address:port",
		scalar(func(c *Config) *netip.AddrPort { return &c.PFCP.Listen }, "an address and port such as 198.18.4.2:8805", parseListen, addrPortText)},
	{"pfcp.peers", "SMFs let in, by address or network; [] lets in those on pfcp.listen's own networks",
		list(func(c *Config) *[]netip.Prefix { return &c.PFCP.Peers }, "a list of addresses or networks such as [198.18.4.1]",
			"an address such as 198.18.4.1 or a network such as 198.18.4.0/24", parsePeer, peersText)},
	{"pfcp.associate", "SMFs upfd associates with itself, address or address:port",
		list(func(c *Config) *[]netip.AddrPort { return &c.PFCP.Associate }, "a list of addresses such as [198.18.4.1]",
			"an address such as 198.18.4.1 or 198.18.4.1:8805", parseSMF, listText)},
	{"pfcp.heartbeat_interval", "how often each associated SMF gets a Heartbeat Request; 0 sends none",
		duration(func(c *Config) *time.Duration { return &c.PFCP.HeartbeatInterval }, "10s")},
	{"pfcp.heartbeat_retries", "sends of one Heartbeat Request, t1 apart, before its SMF is lost",
		count(func(c *Config) *int { return &c.PFCP.HeartbeatRetries }, "a number such as 3", sendsRange)},
	{"pfcp.t1", "how long a request of upfd's waits for its response before it is sent again",
		duration(func(c *Config) *time.Duration { return &c.PFCP.T1 }, "3s")},
	{"pfcp.n1", "sends of a request of upfd's before it is given up",
		count(func(c *Config) *int { return &c.PFCP.N1 }, "a number such as 3", sendsRange)},
	{"pfcp.peer_grace", "how long a lost SMF's sessions are kept; 0 deletes them at once",
		duration(func(c *Config) *time.Duration { return &c.PFCP.PeerGrace }, "60s")},
	{"gtpu.echo_interval", "how often each GTP-U peer in use gets an Echo Request; 0 sends none",
		duration(func(c *Config) *time.Duration { return &c.GTPU.EchoInterval }, "60s")},
	{"gtpu.echo_retries", "Echo Requests unanswered in a row before a GTP-U path has failed",
		count(func(c *Config) *int { return &c.GTPU.EchoRetries }, "a number such as 3", sendsRange)},
	{"interfaces", "the devices upfd attaches to: {name, role: n3|n6|n9, address, mtu}",
		items(func(c *Config) *[]Interface { return &c.Interfaces }, interfaces, interfacesText)},
	{"dnns", "data networks and their UE pools: {name, pools: [prefixes]}",
		items(func(c *Config) *[]DNN { return &c.DNNs }, dnns, dnnsText)},
	{"teid_range", "local TEIDs upfd may allocate, FIRST-LAST",
		scalar(func(c *Config) *TEIDRange { return &c.TEIDRange }, "a range such as 0x100-0xffffff", parseTEIDRange, teidRangeText)},
	{"max_sessions", "the most PFCP sessions at once; sizes the datapath's tables",
		count(func(c *Config) *int { return &c.MaxSessions }, "a number such as 100000", sessionsRange)},
	{"max_pdrs_per_session", fmt.Sprintf("the most PDRs one session may have, 1 to %d", MaxPDRsLimit),
		count(func(c *Config) *int { return &c.MaxPDRsPerSession }, "a number such as 32", pdrsRange)},
	{"gbr_capacity.uplink", "the uplink GBR upfd admits over all sessions, e.g. 10Gbit/s; 0: no limit",
		bitRate(func(c *Config) *uint64 { return &c.GBRCapacity.Uplink })},
	{"gbr_capacity.downlink", "the downlink GBR upfd admits over all sessions, e.g. 10Gbit/s; 0: no limit",
		bitRate(func(c *Config) *uint64 { return &c.GBRCapacity.Downlink })},
	{"buffer.packets_per_session", "downlink packets held for one session, unless its BAR says",
		count(func(c *Config) *int { return &c.Buffer.PacketsPerSession }, "a number such as 64", perSessionRange)},
	{"buffer.total_packets", "downlink packets held for all sessions together",
		count(func(c *Config) *int { return &c.Buffer.TotalPackets }, "a number such as 65536", totalRange)},
	{"xdp_mode", "native, generic, or auto (native, else generic where the driver cannot)",
		text(func(c *Config) *string { return &c.XDPMode }, "native, generic or auto")},
	{"pin_path", `bpffs directory whose pins keep forwarding across restarts; "" pins nothing`,
		text(func(c *Config) *string { return &c.PinPath }, "a directory such as /sys/fs/bpf/upfd")},
	{"state_file", "where upfd, pinned, keeps what N4 knows as it changes, for the next upfd after a stop or a crash",
		text(func(c *Config) *string { return &c.StateFile }, "a file such as /var/lib/upfd/state.journal")},
	{"state_fsync", "true: each change of state_file is on the disk before what it records leaves upfd",
		scalar(func(c *Config) *bool { return &c.StateFsync }, "true or false", yamlfile.ParseBool, strconv.FormatBool)},
	{"api.listen", `where the REST API takes HTTP, address:port; "" serves none`,
		scalar(func(c *Config) *netip.AddrPort { return &c.API.Listen }, "an address and port such as 127.0.0.1:8080",
			parseServerListen(DefaultAPIPort), addrPortText)},
	// Never quoted back in an error: it is a secret.
	{"api.token", `bearer token that requests which change something need; "" keeps the API read-only`,
		text(func(c *Config) *string { return &c.API.Token }, "a token such as one from openssl rand -hex 32")},
	{"metrics.listen", `where Prometheus scrapes /metrics, address:port; "" serves none`,
		scalar(func(c *Config) *netip.AddrPort { return &c.Metrics.Listen }, "an address and port such as 127.0.0.1:9090",
			parseServerListen(DefaultMetricsPort), addrPortText)},
	{"log.level", "debug, info, warn or error", text(func(c *Config) *string { return &c.Log.Level }, "debug, info, warn or error")},
	{"log.format", "text or json", text(func(c *Config) *string { return &c.Log.Format }, "text or json")},
}

// bitRate declares a key of a bit rate.
func bitRate(at func(*Config) *uint64) keyValue {
	return scalar(at, "a bit rate such as 10Gbit/s", yamlfile.ParseBitRate, yamlfile.BitRateText)
}

// logLevelFlag is the flag upfd had before every key had one; it sets
// log.level.
const logLevelFlag = "--log-level"

// example is a value of s to show in a hint: its default, or for a list
// of addresses, whose default is empty, one with two.
func (s *setting) example() string {
	if s.kind == singles {
		return "[198.18.4.1, 198.18.4.3]"
	}
	return s.show(Default())
}

// settingAt is the setting of path, or nil.
func settingAt(path string) *setting {
	for i := range settings {
		if settings[i].path == path {
			return &settings[i]
		}
	}
	return nil
}

// sections are the keys that hold mappings, set key by key.
var sections = sectionNames()

func sectionNames() []string {
	var names []string
	for _, s := range settings {
		if name, _, nested := strings.Cut(s.path, "."); nested && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// The texts below write values as the file would have them.

// yamlString writes s as a YAML scalar, quoted where YAML needs it.
func yamlString(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(out), "\n")
}

func addrPortText(ap netip.AddrPort) string {
	if !ap.IsValid() {
		return `""`
	}
	return yamlString(ap.String())
}

func teidRangeText(r TEIDRange) string { return fmt.Sprintf("%#x-%#x", r.First, r.Last) }

// durationText writes d as time.Duration does, less its zero tails: 1m,
// not 1m0s.
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func listText[T fmt.Stringer](list []T) string {
	items := make([]string, len(list))
	for i, item := range list {
		items[i] = yamlString(item.String())
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// peersText writes an SMF's address alone, a network with its length.
func peersText(list []netip.Prefix) string {
	items := make([]string, len(list))
	for i, p := range list {
		items[i] = p.String()
		if p.IsSingleIP() {
			items[i] = p.Addr().String()
		}
		items[i] = yamlString(items[i])
	}
	return "[" + strings.Join(items, ", ") + "]"
}

func interfacesText(list []Interface) string {
	items := make([]string, len(list))
	for i, iface := range list {
		fields := []string{"name: " + yamlString(iface.Name), "role: " + yamlString(iface.Role)}
		if iface.Address.IsValid() {
			fields = append(fields, "address: "+iface.Address.String())
		}
		if iface.MTU != 0 {
			fields = append(fields, "mtu: "+strconv.Itoa(iface.MTU))
		}
		items[i] = "{" + strings.Join(fields, ", ") + "}"
	}
	return "[" + strings.Join(items, ", ") + "]"
}

func dnnsText(list []DNN) string {
	items := make([]string, len(list))
	for i, dnn := range list {
		items[i] = "{name: " + yamlString(dnn.Name) + ", pools: " + listText(dnn.Pools) + "}"
	}
	return "[" + strings.Join(items, ", ") + "]"
}
