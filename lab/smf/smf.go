// Package smf is the lab's SMF emulator: a PFCP client (TS 29.244) that
// associates with a UPF and establishes, modifies and deletes sessions as
// a profile says (plain, or the flows of the Open5GS and free5GC SMFs),
// measuring the rate it achieves and checking every cause.
//
// Requests are pipelined: up to a window of them are in flight at once, so
// that a fast UPF is not held back by round trips. Each is matched to its
// answer by sequence number and sent again every T1 until answered, N1
// sends at the most (§6.4). A reader answers what the UPF asks meanwhile:
// Heartbeat, Session Report and Node Report Requests, accepted (but a
// report for a session we do not have).
//
// Sessions take their UE address, downlink TEID and (when the SMF gives
// them) uplink TEID from a numbered slot: slot k is the UE pool's address
// k+1 (10.32.0.1 first in the lab's 10.32.0.0/12) and TEID base+k, as
// topo's UE numbering says, so that a traffic generator can cycle over them
// by adding 1.
package smf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/lab/topo"
)

// PFCPPort is where PFCP entities listen (§4.2.1).
const PFCPPort = 8805

// DefaultDNN is the network instance of the sessions unless Config.DNN
// names another.
const DefaultDNN = "internet"

// Config says where the client runs and what its sessions look like. The
// zero value of each field takes the default in its comment, which fits
// the lab's address plan.
type Config struct {
	Namespace string         // network namespace of the socket; "": where we are
	Local     netip.AddrPort // the SMF's N4 address; 198.18.4.1:8805
	UPF       netip.AddrPort // the UPF's N4 address; 198.18.4.2:8805
	NodeID    netip.Addr     // our Node ID and CP F-SEID address; Local's address

	Profile Profile       // plain
	Window  int           // requests in flight at the most (up to 65536); 64
	T1      time.Duration // retransmission timer; 3 s
	N1      int           // sends of a request before it is given up; 3
	// Heartbeat is how often the UPF is sent a Heartbeat Request; 0: never
	// (the UPF's own heartbeats are answered regardless).
	Heartbeat time.Duration

	UEPool   netip.Prefix // IPv4 UE addresses, handed out in order from .1; topo.UEPool, 10.32.0.0/12
	UEPoolV6 netip.Prefix // a /64 per session for IPv4v6 profiles (open5gs); topo.UEPoolV6, 2001:db8:30::/44
	DNN      string       // the network instance; DefaultDNN

	GNB              netip.Addr // the serving gNB's N3 address; 198.18.3.1
	DownlinkTEIDBase uint32     // the gNB's TEID of slot k is this + k; 1
	// GiveUplinkTEIDs makes the SMF give the uplink F-TEIDs instead of
	// asking the UPF to choose them (free5gc always gives them): TEID
	// UplinkTEIDBase + k at UPFN3.
	GiveUplinkTEIDs bool
	UplinkTEIDBase  uint32     // 0x10000000, above the TEIDs upfd chooses
	UPFN3           netip.Addr // the UPF's N3 address, for given F-TEIDs; 198.18.3.2

	// MBR, when set, is every session's QER rate. Unset, plain sessions
	// have no MBR and open5gs and free5gc ones the session AMBR their
	// profile tests use (1 Gbit/s up, 2 Gbit/s down).
	MBR *Bitrate
}

// Bitrate is a rate each way, in kbit/s as the MBR IE carries it.
type Bitrate struct{ UplinkKbps, DownlinkKbps uint64 }

func (c *Config) setDefaults() {
	addrPort := func(v *netip.AddrPort, a netip.Addr) {
		if !v.IsValid() {
			*v = netip.AddrPortFrom(a, PFCPPort)
		}
	}
	addr := func(v *netip.Addr, a netip.Addr) {
		if !v.IsValid() {
			*v = a
		}
	}
	prefix := func(v *netip.Prefix, p netip.Prefix) {
		if !v.IsValid() {
			*v = p
		}
	}
	addrPort(&c.Local, topo.SMFN4)
	addrPort(&c.UPF, topo.UPFN4)
	addr(&c.NodeID, c.Local.Addr())
	addr(&c.GNB, topo.GNBN3)
	addr(&c.UPFN3, topo.UPFN3)
	prefix(&c.UEPool, topo.UEPool)
	prefix(&c.UEPoolV6, topo.UEPoolV6)
	if c.Profile == "" {
		c.Profile = Plain
	}
	if c.Window <= 0 {
		c.Window = 64
	}
	if c.T1 <= 0 {
		c.T1 = 3 * time.Second
	}
	if c.N1 <= 0 {
		c.N1 = 3
	}
	if c.DNN == "" {
		c.DNN = DefaultDNN
	}
	if c.DownlinkTEIDBase == 0 {
		c.DownlinkTEIDBase = 1
	}
	if c.UplinkTEIDBase == 0 {
		c.UplinkTEIDBase = 0x1000_0000
	}
}

// maxWindow bounds the requests in flight: each has a slot for its end.
const maxWindow = 1 << 16

// check refuses what the client cannot work with.
func (c *Config) check() error {
	switch {
	case c.Window > maxWindow:
		return fmt.Errorf("smf: a window of %d requests; at most %d", c.Window, maxWindow)
	case !c.UEPool.Addr().Is4() || c.UEPool.Bits() > 30:
		return fmt.Errorf("smf: UE pool %v: want an IPv4 prefix of /30 or larger", c.UEPool)
	case !c.UEPoolV6.Addr().Is6() || c.UEPoolV6.Bits() > 64:
		return fmt.Errorf("smf: IPv6 UE pool %v: want an IPv6 prefix of /64 or larger", c.UEPoolV6)
	}
	return nil
}

// Client is an SMF with one association to one UPF. Its methods that run
// requests (Associate, Establish, SwitchPath, Delete, Churn) take turns;
// Sessions and Counters may be called at any time.
type Client struct {
	cfg      Config
	flow     flow
	conn     *net.UDPConn
	recovery time.Time // our Recovery Time Stamp: when the client started
	nodeID   *ie.IE

	seq     atomic.Uint32
	pending inflight
	life    context.Context // ends on Close, and with it the timers
	end     context.CancelFunc
	wg      sync.WaitGroup
	closing sync.Once

	turn sync.Mutex // held by the method that runs requests

	mu       sync.Mutex // guards what follows, read by the reader
	sessions map[uint64]*Session
	upf      Peer
	counters Counters
	lastCP   uint64 // the last CP SEID handed out
	slots    slots
	onReport func(Report) // see OnReport
}

// Peer is what the UPF said of itself in the Association Setup Response.
type Peer struct {
	NodeID   string
	Recovery time.Time
	FTUP     bool // it chooses F-TEIDs
}

// Dial opens the client's socket (inside cfg.Namespace, where it stays)
// and starts answering the UPF. Associate comes next.
func Dial(cfg Config) (*Client, error) {
	cfg.setDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	f, err := newFlow(&cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg: cfg, flow: f,
		recovery: time.Now().Truncate(time.Second), // the IE carries seconds
		nodeID:   nodeIDIE(cfg.NodeID),
		pending:  inflight{bySeq: map[uint32]*transaction{}},
		sessions: map[uint64]*Session{},
		slots:    slots{limit: slotLimit(cfg)},
	}
	err = netns.Do(cfg.Namespace, func() (err error) {
		c.conn, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(cfg.Local))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("smf: listen on %v: %w", cfg.Local, err)
	}
	c.life, c.end = context.WithCancel(context.Background())
	// Room for a window of answers should the reader be late; the kernel
	// caps it at net.core.rmem_max.
	c.conn.SetReadBuffer(4 << 20)
	c.wg.Add(2)
	go c.receive()
	go c.retransmit()
	if cfg.Heartbeat > 0 {
		c.wg.Add(1)
		go c.heartbeats()
	}
	return c, nil
}

// Close stops the client; requests still in flight end with ErrClosed.
// It leaves the sessions in the UPF: Delete them first to remove them.
func (c *Client) Close() error {
	var err error
	c.closing.Do(func() {
		c.end()
		err = c.conn.Close()
		c.wg.Wait()
		c.pending.failAll(ErrClosed)
	})
	return err
}

// Associate sets up the association: our Node ID, Recovery Time Stamp and
// CP Function Features, as all three SMF profiles send them.
func (c *Client) Associate(ctx context.Context) error {
	c.turn.Lock()
	defer c.turn.Unlock()
	req := message.NewAssociationSetupRequest(0, c.nodeID,
		ie.NewRecoveryTimeStamp(c.recovery), ie.NewCPFunctionFeatures(0))
	m, err := c.ask(ctx, req)
	if err != nil {
		return fmt.Errorf("association setup: %w", err)
	}
	if err := accepted(req, m, nil); err != nil {
		return err
	}
	peer, err := peerOf(m.(*message.AssociationSetupResponse))
	if err != nil {
		return fmt.Errorf("association setup response: %w", err)
	}
	c.mu.Lock()
	c.upf = peer
	c.mu.Unlock()
	if !peer.FTUP && !c.cfg.GiveUplinkTEIDs && c.cfg.Profile != Free5GC {
		return fmt.Errorf("association setup: UPF %s does not choose F-TEIDs (no FTUP); give them (GiveUplinkTEIDs)", peer.NodeID)
	}
	return nil
}

// peerOf reads what the UPF says of itself.
func peerOf(r *message.AssociationSetupResponse) (Peer, error) {
	var p Peer
	var err error
	if r.NodeID == nil || r.RecoveryTimeStamp == nil {
		return p, errors.New("no Node ID or no Recovery Time Stamp")
	}
	if p.NodeID, err = r.NodeID.NodeID(); err != nil {
		return p, fmt.Errorf("Node ID: %w", err)
	}
	if p.Recovery, err = r.RecoveryTimeStamp.RecoveryTimeStamp(); err != nil {
		return p, fmt.Errorf("Recovery Time Stamp: %w", err)
	}
	if r.UPFunctionFeatures != nil {
		f, err := r.UPFunctionFeatures.UPFunctionFeatures()
		p.FTUP = err == nil && len(f) > 0 && f[0]&0x10 != 0 // octet 5 bit 5 (§8.2.25)
	}
	return p, nil
}

// UPF is what the UPF said of itself when it accepted the association.
func (c *Client) UPF() Peer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.upf
}

// Counters are what the client saw besides the answers to its requests.
type Counters struct {
	Reports     int // Session Report Requests answered
	Heartbeats  int // the UPF's Heartbeat Requests answered
	NodeReports int // Node Report Requests answered
	// Our Heartbeat Requests: answered, and given up after N1 sends.
	HeartbeatsAnswered, HeartbeatsLost int
	// UPFRestarts counts Heartbeat Responses with a Recovery Time Stamp
	// other than the association's: the UPF restarted and lost our sessions.
	UPFRestarts int
	Stray       int // answers to nothing in flight (late or duplicated)
	Undecodable int // datagrams that are not PFCP messages
}

// Counters returns the counts so far.
func (c *Client) Counters() Counters {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counters
}

// bump adds one to a counter of c.counters.
func (c *Client) bump(n *int) {
	c.mu.Lock()
	*n++
	c.mu.Unlock()
}

func nodeIDIE(a netip.Addr) *ie.IE {
	if a.Is4() {
		return ie.NewNodeID(a.String(), "", "")
	}
	return ie.NewNodeID("", a.String(), "")
}
