package smf

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/lab/topo"
)

// Session is one PFCP session as the SMF drives it, with what the UPF
// answered: what a traffic generator needs to send through it.
type Session struct {
	CPSEID uint64       // ours, in the CP F-SEID
	UPSEID uint64       // the UPF's, from the UP F-SEID
	UE     netip.Addr   // the UE's IPv4 address
	UEv6   netip.Prefix // the UE's /64 in IPv4v6 profiles (open5gs); else zero
	// UplinkTEID at UplinkAddr is the N3 tunnel into the UPF: chosen by
	// the UPF (from its Created PDR), or given by the SMF.
	UplinkTEID uint32
	UplinkAddr netip.Addr
	// DownlinkTEID at GNB is the N3 tunnel out of it; GNB changes with a
	// path switch.
	DownlinkTEID uint32
	GNB          netip.Addr
	QFI          uint8 // of the default QoS flow: on downlink G-PDUs

	slot        int  // the slot its address and TEIDs come from
	established bool // the UPF accepted it: its slot is freed on deletion
}

// errorf is an error about s.
func (s *Session) errorf(format string, a ...any) error {
	return fmt.Errorf("session %#x (UE %v): "+format, append([]any{s.CPSEID, s.UE}, a...)...)
}

// Sessions returns the established sessions, by CP SEID.
func (c *Client) Sessions() []Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := c.liveLocked()
	out := make([]Session, len(live))
	for i, s := range live {
		out[i] = *s
	}
	return out
}

// Establish establishes n new sessions as the profile's SMF does. Where
// that leaves the downlink without a tunnel until the gNB has answered
// (open5gs, free5gc), the modification the SMF then sends follows, in a
// second phase ("activate"), so that every session forwards both ways.
func (c *Client) Establish(ctx context.Context, n int) ([]Phase, error) {
	c.turn.Lock()
	defer c.turn.Unlock()
	fresh, err := c.newSessions(n)
	if err != nil {
		return nil, err
	}
	est, err := c.run(ctx, "establish", fresh, c.establishment)
	c.releaseUnestablished(fresh)
	if err != nil || !c.flow.activates() {
		return []Phase{est}, err
	}
	act, err := c.run(ctx, "activate", fresh, c.activation)
	return []Phase{est, act}, err
}

// SwitchPath moves every session's downlink to the gNB at to, as the
// profile's SMF does on a handover.
func (c *Client) SwitchPath(ctx context.Context, to netip.Addr) (Phase, error) {
	c.turn.Lock()
	defer c.turn.Unlock()
	return c.run(ctx, "switch to "+to.String(), c.live(), c.pathSwitch(to))
}

// SwitchPathOf moves the downlink of the sessions given (by CP SEID) to
// the gNB at to, as SwitchPath does for every session.
func (c *Client) SwitchPathOf(ctx context.Context, sessions []Session, to netip.Addr) (Phase, error) {
	c.turn.Lock()
	defer c.turn.Unlock()
	return c.run(ctx, "switch to "+to.String(), c.mine(sessions), c.pathSwitch(to))
}

// mine are the client's own records of the established sessions given,
// by CP SEID; those it does not hold are left out.
func (c *Client) mine(sessions []Session) []*Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Session
	for _, s := range sessions {
		if x, ok := c.sessions[s.CPSEID]; ok {
			out = append(out, x)
		}
	}
	return out
}

// SetMBR sets the MBR of the first n sessions (in the order of Sessions)
// to r, in the QER that holds the profile's session AMBR, as an SMF does
// when the AMBR changes; nil takes it away (no limit), whatever the
// profile had.
func (c *Client) SetMBR(ctx context.Context, n int, r *Bitrate) (Phase, error) {
	c.turn.Lock()
	defer c.turn.Unlock()
	live := c.live()
	if n < 0 || n > len(live) {
		return Phase{}, fmt.Errorf("smf: an MBR for %d sessions of %d", n, len(live))
	}
	return c.run(ctx, "set the MBR", live[:n], func(s *Session) *op {
		return &op{sess: s, msg: modification(s, []*ie.IE{updateMBR(c.flow.rateQER(), r)})}
	})
}

// Delete deletes every session.
func (c *Client) Delete(ctx context.Context) (Phase, error) {
	c.turn.Lock()
	defer c.turn.Unlock()
	return c.run(ctx, "delete", c.live(), c.deletion)
}

// live are the established sessions, by CP SEID.
func (c *Client) live() []*Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.liveLocked()
}

// liveLocked is live with c.mu held.
func (c *Client) liveLocked() []*Session {
	out := make([]*Session, 0, len(c.sessions))
	for _, s := range c.sessions {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Session) int { return cmp.Compare(a.CPSEID, b.CPSEID) })
	return out
}

// newSessions makes n sessions of the profile on free slots, not yet
// established.
func (c *Client) newSessions(n int) ([]*Session, error) { return c.newSessionsOf(c.flow, n) }

// newSessionsOf makes n sessions that f prepares on free slots.
func (c *Client) newSessionsOf(f flow, n int) ([]*Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Session, 0, n)
	for range n {
		slot, ok := c.slots.take()
		if !ok {
			for _, s := range out {
				c.slots.release(s.slot)
			}
			return nil, fmt.Errorf("smf: no room for %d more sessions: UE pool %v and TEIDs allow %d in all, %d in use",
				n, c.cfg.UEPool, c.slots.limit, len(c.sessions))
		}
		out = append(out, c.newSession(f, slot))
	}
	return out, nil
}

// newSession is the session of slot that f prepares, with a fresh CP
// SEID. Called with c.mu held.
func (c *Client) newSession(f flow, slot int) *Session {
	c.lastCP++
	s := &Session{CPSEID: c.lastCP, UE: topo.UEAddr(c.cfg.UEPool, slot), GNB: c.cfg.GNB,
		DownlinkTEID: c.cfg.DownlinkTEIDBase + uint32(slot), slot: slot}
	f.prepare(s)
	return s
}

// releaseUnestablished gives back the slots of those of fresh that the
// UPF did not establish; the others' go when they are deleted.
func (c *Client) releaseUnestablished(fresh []*Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range fresh {
		if !s.established {
			c.slots.release(s.slot)
		}
	}
}

// The requests, one function per kind, each with what its acceptance
// changes.

func (c *Client) establishment(s *Session) *op {
	return &op{sess: s, msg: c.establishmentRequest(s, c.flow.establishment(s)),
		onAccept: func(m message.Message) error { return c.established(s, m.(*message.SessionEstablishmentResponse)) }}
}

// establishmentRequest is s's Session Establishment Request with a
// profile's IEs after ours.
func (c *Client) establishmentRequest(s *Session, ies []*ie.IE) message.Message {
	ies = append([]*ie.IE{c.nodeID, fseid(s.CPSEID, c.cfg.NodeID)}, ies...)
	return message.NewSessionEstablishmentRequest(0, 0, 0, 0, 0, ies...)
}

func (c *Client) activation(s *Session) *op {
	return &op{sess: s, msg: modification(s, c.flow.activation(s))}
}

func (c *Client) pathSwitch(to netip.Addr) func(*Session) *op {
	return func(s *Session) *op {
		return &op{sess: s, msg: modification(s, c.flow.pathSwitch(s, to)),
			onAccept: func(message.Message) error {
				c.mu.Lock()
				s.GNB = to
				c.mu.Unlock()
				return nil
			}}
	}
}

func (c *Client) deletion(s *Session) *op {
	return &op{sess: s, msg: message.NewSessionDeletionRequest(0, 0, s.UPSEID, 0, 0),
		onAccept: func(message.Message) error {
			c.mu.Lock()
			delete(c.sessions, s.CPSEID)
			c.slots.release(s.slot)
			c.mu.Unlock()
			return nil
		}}
}

func modification(s *Session, ies []*ie.IE) message.Message {
	return message.NewSessionModificationRequest(0, 0, s.UPSEID, 0, 0, ies...)
}

// established records what the UPF answered: its SEID and, when it chose
// it, the uplink F-TEID.
func (c *Client) established(s *Session, r *message.SessionEstablishmentResponse) error {
	if r.UPFSEID == nil {
		return errors.New("no UP F-SEID")
	}
	up, err := r.UPFSEID.FSEID()
	if err != nil {
		return fmt.Errorf("UP F-SEID: %w", err)
	}
	s.UPSEID = up.SEID
	if s.UplinkTEID == 0 {
		f, err := createdFTEID(r.CreatedPDR, c.flow.uplinkPDR())
		if err != nil {
			return err
		}
		s.UplinkTEID = f.TEID
		s.UplinkAddr, _ = netip.AddrFromSlice(f.IPv4Address.To4())
	}
	c.mu.Lock()
	s.established = true
	c.sessions[s.CPSEID] = s
	c.mu.Unlock()
	return nil
}

// createdFTEID is the IPv4 F-TEID the UPF chose for PDR id.
func createdFTEID(created []*ie.IE, id uint16) (*ie.FTEIDFields, error) {
	for _, c := range created {
		kids, err := c.CreatedPDR()
		if err != nil {
			return nil, fmt.Errorf("Created PDR: %w", err)
		}
		if f := fteidOf(kids, id); f != nil {
			if f.TEID == 0 || f.IPv4Address.To4() == nil {
				return nil, fmt.Errorf("PDR %d: created F-TEID %+v has no TEID or no IPv4 address", id, f)
			}
			return f, nil
		}
	}
	return nil, fmt.Errorf("no Created PDR with an F-TEID for PDR %d, which asked the UPF to choose one", id)
}

// fteidOf is the F-TEID among the IEs of a Created PDR, if it is PDR id's.
func fteidOf(kids []*ie.IE, id uint16) *ie.FTEIDFields {
	var f *ie.FTEIDFields
	mine := false
	for _, k := range kids {
		switch k.Type {
		case ie.PDRID:
			got, err := k.PDRID()
			mine = err == nil && got == id
		case ie.FTEID:
			f, _ = k.FTEID()
		}
	}
	if !mine {
		return nil
	}
	return f
}

func fseid(seid uint64, a netip.Addr) *ie.IE {
	if a.Is4() {
		return ie.NewFSEID(seid, a.AsSlice(), nil)
	}
	return ie.NewFSEID(seid, nil, a.AsSlice())
}

// slots numbers the sessions' addresses and TEIDs. The lowest free slot
// is taken first, so that a population stays contiguous; a slot is freed
// only once the UPF has accepted the deletion of its session.
type slots struct {
	used  []bool
	low   int // no free slot below it
	limit int
}

func (s *slots) take() (int, bool) {
	for k := s.low; k < s.limit; k++ {
		if k == len(s.used) {
			s.used = append(s.used, false)
		}
		if !s.used[k] {
			s.used[k] = true
			s.low = k + 1
			return k, true
		}
	}
	return 0, false
}

func (s *slots) release(k int) {
	s.used[k] = false
	s.low = min(s.low, k)
}

// slotLimit is how many sessions the pools and TEID bases have room for.
func slotLimit(cfg Config) int {
	n := uint64(topo.UESlots(cfg.UEPool))
	if cfg.Profile == Open5GS {
		n = min(n, uint64(topo.UESlots(cfg.UEPoolV6)))
	}
	n = min(n, math.MaxUint32-uint64(cfg.DownlinkTEIDBase), (math.MaxUint32-uint64(cfg.UplinkTEIDBase))/2)
	return int(min(n, 1<<24))
}

// Capacity is how many sessions a client with cfg has room for at once:
// what its UE pools number (topo.UESlots) within its TEID bases, and 2^24
// at the most. The zero Config is the lab's.
func Capacity(cfg Config) int {
	cfg.setDefaults()
	return slotLimit(cfg)
}
