// Package config reads upfd's configuration: defaults, then a YAML file,
// then environment variables, then command-line flags, each over the one
// before (Load).
//
// Absent keys take the defaults of Default, which match the project's lab.
// A key that holds a list (interfaces, dnns, pfcp.peers, pfcp.associate)
// replaces the default list entirely. Every key that holds a value or a
// list can also be set by an environment variable (UPFD_PFCP_T1) and a
// flag (--pfcp.t1), whose value is the key's value as the file would have it.
//
// Every error names where the value came from, the key, and says what to
// write instead, in one line:
//
//	upfd.yaml:7: interfaces[1].role: "n4" is not a role; want n3, n6 or n9
//	env UPFD_PFCP_T1: "3" has no unit; write it with one, e.g. 3s or 3ms
//	flag --interfaces: interfaces[1].role: "n4" is not a role; want n3, n6 or n9
//
// A key the file leaves out has no line (upfd.yaml: key: ...), and a YAML
// syntax error has no key. Anchors may be set but aliases and merge keys
// are refused, as are unknown keys, unknown UPFD_ variables, unknown flags
// and a second document.
//
// When there are several problems, the first is reported: flags and
// variables that name no key, then YAML syntax, keys, types and values in
// file order, then those of the variables and the flags, then the rules
// that relate values to each other (Validate), in the same order. The
// checks that need the running host (devices, addresses, ports, the BPF
// file system) are apart, in CheckHost, so that a file can be checked
// anywhere.
package config

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// Config is upfd's configuration.
type Config struct {
	NodeID      string      // node_id: an IPv4 or IPv6 address, or an FQDN
	PFCP        PFCP        // pfcp
	GTPU        GTPU        // gtpu
	Interfaces  []Interface // interfaces: exactly one n3 and one n6, at most one n9
	DNNs        []DNN       // dnns: at least one, pools disjoint across all of them
	TEIDRange   TEIDRange   // teid_range: "FIRST-LAST", hex (0x...) or decimal
	MaxSessions int         // max_sessions: 1 to MaxSessionsLimit
	// MaxPDRsPerSession is the most PDRs one session may have
	// (max_pdrs_per_session: 1 to MaxPDRsLimit).
	MaxPDRsPerSession int
	GBRCapacity       GBRCapacity // gbr_capacity
	Buffer            Buffer      // buffer
	XDPMode           string      // xdp_mode: XDPNative, XDPGeneric or XDPAuto
	// PinPath is the bpffs directory where upfd pins its maps and links, so
	// that forwarding outlives a restart (pin_path: under BPFFS; "" pins
	// nothing, and the datapath goes when upfd does).
	PinPath string
	// StateFile is where upfd, pinned, keeps what N4 knows, written as it
	// changes, for the next upfd to take back after a stop or a crash
	// (state_file: an absolute path outside BPFFS; used only with PinPath).
	StateFile string
	// StateFsync puts each change of the state file on the disk before
	// what it records leaves upfd (state_fsync).
	StateFsync bool
	API        API     // api
	Metrics    Metrics // metrics
	Log        Log     // log

	// origin says where each key was set, so that errors can name the
	// file and line, the variable or the flag. It is nil for a Config
	// built in code.
	origin *origin
}

// PFCP is the N4 endpoint.
type PFCP struct {
	Listen netip.AddrPort // pfcp.listen: where upfd takes PFCP, host:port
	// Peers are the SMFs upfd takes requests from (pfcp.peers), each an
	// address (a full-length prefix) or a network; empty lets in those on
	// the networks of pfcp.listen's device (PeerNetworks).
	Peers []netip.Prefix
	// Associate are the SMFs upfd sends Association Setup Request to itself
	// (pfcp.associate: address or address:port, port DefaultPFCPPort when
	// left out). Each must also be in Peers, unless Peers is empty.
	Associate []netip.AddrPort
	// HeartbeatInterval is how often each associated SMF gets a Heartbeat
	// Request (pfcp.heartbeat_interval); 0 sends none, and then no SMF is
	// ever declared lost.
	HeartbeatInterval time.Duration
	// HeartbeatRetries is N1 for heartbeats (pfcp.heartbeat_retries): an SMF
	// is lost when one Heartbeat Request, sent this many times T1 apart
	// (the first send included), gets no answer. At least 1.
	HeartbeatRetries int
	// T1 and N1 pace upfd's own requests (TS 29.244 §6.4): a request is sent
	// again when no response came within T1 (pfcp.t1, above 0), and given
	// up after N1 sends in all, the first included (pfcp.n1, at least 1).
	T1 time.Duration
	N1 int
	// PeerGrace is how long a lost SMF's sessions are kept, forwarding, in
	// case it answers again, before they are deleted (pfcp.peer_grace; 0
	// deletes them as soon as the SMF is lost).
	PeerGrace time.Duration
}

// GTPU is path management toward the GTP-U peers in use (gNBs, other UPFs).
type GTPU struct {
	// EchoInterval is how often each GTP-U peer in use gets an Echo Request
	// (gtpu.echo_interval, TS 29.281 §7.2.1); 0 sends none.
	EchoInterval time.Duration
	// EchoRetries is how many Echo Requests in a row, EchoInterval apart,
	// may go unanswered before the path has failed; one is unanswered when
	// no response came by the time the next is due (gtpu.echo_retries, at
	// least 1).
	EchoRetries int
}

// GBRCapacity is the guaranteed bit rate upfd admits in total, in bit/s
// each way: a session request whose QERs' GBRs would take the sum of all
// sessions' over it is refused (No resources available). 0 sets no limit.
type GBRCapacity struct {
	Uplink   uint64 // gbr_capacity.uplink
	Downlink uint64 // gbr_capacity.downlink
}

// Buffer bounds the downlink packets held for sessions whose FAR buffers
// (BUFF), until the SMF has the UE paged and the FAR forwards again.
type Buffer struct {
	// PacketsPerSession is what one session may hold when its BAR suggests
	// no count (buffer.packets_per_session: 1 to BufferPerSessionLimit).
	PacketsPerSession int
	// TotalPackets is what all sessions together may hold
	// (buffer.total_packets: at least PacketsPerSession).
	TotalPackets int
}

// Interface is a network device upfd attaches to.
type Interface struct {
	Name    string     // interfaces[].name: device name
	Role    string     // interfaces[].role: "n3", "n6" or "n9"
	Address netip.Addr // interfaces[].address: GTP-U address (required for n3 and n9, refused for n6)
	MTU     int        // interfaces[].mtu: 0 keeps the device's; else MinMTU (1280 with IPv6) to MaxMTU
}

// API is the REST API's server.
type API struct {
	// Listen is where it takes HTTP over TCP (api.listen); the zero
	// AddrPort, written "", serves no API.
	Listen netip.AddrPort
	// Token is the bearer token that requests which change something must
	// carry (api.token); "" makes the API read-only.
	Token string
}

// Metrics is the Prometheus server.
type Metrics struct {
	// Listen is where /metrics is served over TCP (metrics.listen); the zero
	// AddrPort, written "", serves none.
	Listen netip.AddrPort
}

// Log is what upfd logs and how.
type Log struct {
	Level  string // log.level: LevelDebug, LevelInfo, LevelWarn or LevelError
	Format string // log.format: FormatText or FormatJSON
}

// SlogLevel is Level for log/slog; a level Validate refuses is Info.
func (l Log) SlogLevel() slog.Level {
	switch l.Level {
	case LevelDebug:
		return slog.LevelDebug
	case LevelWarn:
		return slog.LevelWarn
	case LevelError:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// DNN is a data network and the UE addresses that belong to it.
type DNN struct {
	Name  string         // dnns[].name
	Pools []netip.Prefix // dnns[].pools: IPv4 and/or IPv6 UE pools
}

// TEIDRange is the span of local TEIDs upfd may allocate, both ends included.
type TEIDRange struct{ First, Last uint32 }

// Interface roles.
const (
	RoleN3 = "n3"
	RoleN6 = "n6"
	RoleN9 = "n9"
)

// XDP attach modes.
const (
	XDPNative  = "native"  // in the driver
	XDPGeneric = "generic" // in the kernel's stack, after the driver: any device, slowly
	XDPAuto    = "auto"    // native, or generic on a device whose driver cannot
)

// Log levels and formats.
const (
	LevelDebug = "debug"
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
	FormatText = "text" // log/slog's key=value lines
	FormatJSON = "json" // one JSON object a line
)

// MaxSessionsLimit is the largest max_sessions accepted.
const MaxSessionsLimit = 16_000_000

// DefaultPFCPPort is the PFCP port (TS 29.244).
const DefaultPFCPPort = 8805

// BufferPerSessionLimit is the largest buffer.packets_per_session accepted.
const BufferPerSessionLimit = 65535

// MaxPDRsLimit is the largest max_pdrs_per_session accepted: the PDRs the
// datapath holds for one lookup key, one F-TEID or UE address
// (datapath.MaxPDRs, UPF_MAX_PDRS in bpf/upf_types.h).
const MaxPDRsLimit = 32

// The MTUs an interface may be given: IPv4's least (RFC 791), IPv6's
// (RFC 8200 §5), and the most Linux takes (IP_MAX_MTU).
const (
	MinMTU     = 68
	MinMTUIPv6 = 1280
	MaxMTU     = 65535
)

// DefaultStateFile is state_file's default, where systemd's StateDirectory=upfd is.
const DefaultStateFile = "/var/lib/upfd/state.journal"

// Default ports of the REST API and of Prometheus metrics, as eUPF's.
const (
	DefaultAPIPort     = 8080
	DefaultMetricsPort = 9090
)

// BPFFS is where the BPF file system is mounted; pin_path lies below it.
const BPFFS = "/sys/fs/bpf"

// Default returns the configuration used for keys a file leaves out. It
// runs as-is in the lab's UPF namespace (n3 = 198.18.3.2, n6, N4 on
// 198.18.4.2).
func Default() *Config {
	return &Config{
		NodeID: "198.18.4.2",
		PFCP: PFCP{
			Listen:            netip.AddrPortFrom(netip.MustParseAddr("198.18.4.2"), DefaultPFCPPort),
			HeartbeatInterval: 10 * time.Second,
			HeartbeatRetries:  3,
			T1:                3 * time.Second,
			N1:                3,
			PeerGrace:         60 * time.Second,
		},
		GTPU: GTPU{
			// TS 29.281 §7.2.1: no more often than every 60 s on a path.
			EchoInterval: 60 * time.Second,
			EchoRetries:  3,
		},
		Interfaces: []Interface{
			{Name: "n3", Role: RoleN3, Address: netip.MustParseAddr("198.18.3.2")},
			{Name: "n6", Role: RoleN6},
		},
		DNNs: []DNN{
			{Name: "internet", Pools: []netip.Prefix{netip.MustParsePrefix("10.45.0.0/16")}},
		},
		TEIDRange:         TEIDRange{First: 0x100, Last: 0xffffff},
		MaxSessions:       100_000,
		MaxPDRsPerSession: MaxPDRsLimit,
		Buffer:            Buffer{PacketsPerSession: 64, TotalPackets: 65_536},
		XDPMode:           XDPNative,
		StateFile:         DefaultStateFile,
		// Loopback only: the API and the metrics say much about the
		// network, and the API can change things once given a token.
		API:     API{Listen: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), DefaultAPIPort)},
		Metrics: Metrics{Listen: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), DefaultMetricsPort)},
		Log:     Log{Level: LevelInfo, Format: FormatText},
	}
}

// Parse decodes data, the contents of the file called name, over the
// defaults and validates the result. Errors start with name. It reads no
// environment and no flags: Load does.
func Parse(name string, data []byte) (*Config, error) {
	c := Default()
	c.origin = &origin{file: yamlfile.NewSource(name)}
	if err := decode(c, c.origin.file, data); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// source remembers where a parsed value came from: the name of the file
// (or "env UPFD_X", "flag --x") and the line of every key path, e.g.
// "interfaces[1].role".
type source = yamlfile.Source
