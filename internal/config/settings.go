package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// setting is a key that an environment variable and a flag set as well as
// the file: every key that holds a value or a list. Sections (pfcp, api)
// are set key by key.
type setting struct {
	path  string               // key path, e.g. "pfcp.t1"
	kind  settingKind          // how a variable's or flag's text is read
	usage string               // what it is, for --help
	show  func(*Config) string // its value as the file would have it, for --help's defaults
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
	{"node_id", single, "PFCP Node ID: an IP address or an FQDN", func(c *Config) string { return yamlString(c.NodeID) }},
	{"pfcp.listen", single, "where upfd takes PFCP (UDP), address:port", func(c *Config) string { return addrPortText(c.PFCP.Listen) }},
	{"pfcp.peers", singles, "SMFs let in, by address or network; [] lets in those on pfcp.listen's own networks",
		func(c *Config) string { return peersText(c.PFCP.Peers) }},
	{"pfcp.associate", singles, "SMFs upfd associates with itself, address or address:port", func(c *Config) string { return listText(c.PFCP.Associate) }},
	{"pfcp.heartbeat_interval", single, "how often each associated SMF gets a Heartbeat Request; 0 sends none",
		func(c *Config) string { return durationText(c.PFCP.HeartbeatInterval) }},
	{"pfcp.heartbeat_retries", single, "sends of one Heartbeat Request, t1 apart, before its SMF is lost",
		func(c *Config) string { return strconv.Itoa(c.PFCP.HeartbeatRetries) }},
	{"pfcp.t1", single, "how long a request of upfd's waits for its response before it is sent again",
		func(c *Config) string { return durationText(c.PFCP.T1) }},
	{"pfcp.n1", single, "sends of a request of upfd's before it is given up", func(c *Config) string { return strconv.Itoa(c.PFCP.N1) }},
	{"pfcp.peer_grace", single, "how long a lost SMF's sessions are kept; 0 deletes them at once",
		func(c *Config) string { return durationText(c.PFCP.PeerGrace) }},
	{"gtpu.echo_interval", single, "how often each GTP-U peer in use gets an Echo Request; 0 sends none",
		func(c *Config) string { return durationText(c.GTPU.EchoInterval) }},
	{"gtpu.echo_retries", single, "Echo Requests unanswered in a row before a GTP-U path has failed",
		func(c *Config) string { return strconv.Itoa(c.GTPU.EchoRetries) }},
	{"interfaces", structured, "the devices upfd attaches to: {name, role: n3|n6|n9, address, mtu}",
		func(c *Config) string { return interfacesText(c.Interfaces) }},
	{"dnns", structured, "data networks and their UE pools: {name, pools: [prefixes]}", func(c *Config) string { return dnnsText(c.DNNs) }},
	{"teid_range", single, "local TEIDs upfd may allocate, FIRST-LAST", func(c *Config) string {
		return fmt.Sprintf("%#x-%#x", c.TEIDRange.First, c.TEIDRange.Last)
	}},
	{"max_sessions", single, "the most PFCP sessions at once; sizes the datapath's tables", func(c *Config) string { return strconv.Itoa(c.MaxSessions) }},
	{"max_pdrs_per_session", single, fmt.Sprintf("the most PDRs one session may have, 1 to %d", MaxPDRsLimit),
		func(c *Config) string { return strconv.Itoa(c.MaxPDRsPerSession) }},
	{"gbr_capacity.uplink", single, "the uplink GBR upfd admits over all sessions, e.g. 10Gbit/s; 0: no limit",
		func(c *Config) string { return bitRateText(c.GBRCapacity.Uplink) }},
	{"gbr_capacity.downlink", single, "the downlink GBR upfd admits over all sessions, e.g. 10Gbit/s; 0: no limit",
		func(c *Config) string { return bitRateText(c.GBRCapacity.Downlink) }},
	{"buffer.packets_per_session", single, "downlink packets held for one session, unless its BAR says",
		func(c *Config) string { return strconv.Itoa(c.Buffer.PacketsPerSession) }},
	{"buffer.total_packets", single, "downlink packets held for all sessions together",
		func(c *Config) string { return strconv.Itoa(c.Buffer.TotalPackets) }},
	{"xdp_mode", single, "native, generic, or auto (native, else generic where the driver cannot)", func(c *Config) string { return yamlString(c.XDPMode) }},
	{"pin_path", single, `bpffs directory whose pins keep forwarding across restarts; "" pins nothing`,
		func(c *Config) string { return yamlString(c.PinPath) }},
	{"state_file", single, "where upfd, pinned, keeps what N4 knows as it changes, for the next upfd after a stop or a crash",
		func(c *Config) string { return yamlString(c.StateFile) }},
	{"state_fsync", single, "true: each change of state_file is on the disk before what it records leaves upfd",
		func(c *Config) string { return strconv.FormatBool(c.StateFsync) }},
	{"api.listen", single, `where the REST API takes HTTP, address:port; "" serves none`, func(c *Config) string { return addrPortText(c.API.Listen) }},
	{"api.token", single, `bearer token that requests which change something need; "" keeps the API read-only`,
		func(c *Config) string { return yamlString(c.API.Token) }},
	{"metrics.listen", single, `where Prometheus scrapes /metrics, address:port; "" serves none`,
		func(c *Config) string { return addrPortText(c.Metrics.Listen) }},
	{"log.level", single, "debug, info, warn or error", func(c *Config) string { return yamlString(c.Log.Level) }},
	{"log.format", single, "text or json", func(c *Config) string { return yamlString(c.Log.Format) }},
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
var sections = []string{"pfcp", "gtpu", "gbr_capacity", "buffer", "api", "metrics", "log"}

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

// bitRateText writes bit/s in the largest unit that keeps it whole: 10Gbit/s.
func bitRateText(v uint64) string {
	if v == 0 {
		return "0"
	}
	for _, u := range bitRateUnits {
		if v%u.scale == 0 {
			return strconv.FormatUint(v/u.scale, 10) + u.name
		}
	}
	return strconv.FormatUint(v, 10) + "bit/s" // not reached: bit/s divides all
}

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
