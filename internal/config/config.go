// Package config reads upfd's YAML configuration file.
//
// Absent keys take the defaults of Default, which match the project's lab.
// A key that holds a list (interfaces, dnns, pfcp.peers, pfcp.associate)
// replaces the default list entirely. Every error names the file, the line and the key,
// and says what to write instead, in one line:
//
//	upfd.yaml:7: interfaces[1].role: "n4" is not a role; want n3, n6 or n9
//
// A key the file leaves out has no line (upfd.yaml: key: ...), and a YAML
// syntax error has no key. Anchors may be set but aliases and merge keys
// are refused, as are unknown keys and a second document.
//
// When a file has several problems, the first is reported: YAML syntax
// first, then keys, types and values in file order, then the rules that
// relate values to each other (Validate), again in file order.
package config

import (
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
	Buffer      Buffer      // buffer
	XDPMode     string      // xdp_mode: "native" or "generic"
	// PinPath is the bpffs directory where upfd pins its maps and links, so
	// that forwarding outlives a restart (pin_path: under BPFFS; "" pins
	// nothing, and the datapath goes when upfd does).
	PinPath string

	// src locates keys in the file, so that Validate can name their lines.
	// It is nil for a Config built in code.
	src *source
}

// PFCP is the N4 endpoint.
type PFCP struct {
	Listen netip.AddrPort // pfcp.listen: where upfd takes PFCP, host:port
	Peers  []netip.Addr   // pfcp.peers: SMFs allowed to associate; empty lets any in
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
	XDPNative  = "native"
	XDPGeneric = "generic"
)

// MaxSessionsLimit is the largest max_sessions accepted.
const MaxSessionsLimit = 16_000_000

// DefaultPFCPPort is the PFCP port (TS 29.244).
const DefaultPFCPPort = 8805

// BufferPerSessionLimit is the largest buffer.packets_per_session accepted.
const BufferPerSessionLimit = 65535

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
		TEIDRange:   TEIDRange{First: 0x100, Last: 0xffffff},
		MaxSessions: 100_000,
		Buffer:      Buffer{PacketsPerSession: 64, TotalPackets: 65_536},
		XDPMode:     XDPNative,
	}
}

// Load reads and validates the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := yamlfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes data, the contents of the file called name, over the
// defaults and validates the result. Errors start with name.
func Parse(name string, data []byte) (*Config, error) {
	c := Default()
	c.src = yamlfile.NewSource(name)
	if err := decode(c, data); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// source remembers where a parsed Config came from: the file and the line
// of every key path, e.g. "interfaces[1].role".
type source = yamlfile.Source
