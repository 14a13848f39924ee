// Package pfcp is the UPF's N4: PFCP over UDP (TS 29.244) toward SMFs.
//
// One goroutine owns every piece of state: datagrams arrive on a channel
// from a reader, each request is decoded into a session.Request (no wire
// type goes further), applied through the session store, the rule
// compiler and the datapath, and answered. A retransmitted request is
// answered from a cache of responses, never applied twice.
package pfcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/rules"
	"github.com/sluice-upf/sluice/internal/session"
)

// Config is what the server needs to know about itself.
type Config struct {
	NodeID   string         // an IPv4/IPv6 address or an FQDN
	Listen   netip.AddrPort // 8805 by convention
	Peers    []netip.Addr   // allowed SMFs; empty: any
	Recovery time.Time      // our Recovery Time Stamp: when we started
}

// Datapath is what the server asks of the datapath.
type Datapath interface {
	Apply([]datapath.Op) error
	Usage(urrSlot uint32) (datapath.Usage, error)
}

// Server serves N4.
type Server struct {
	cfg    Config
	log    *slog.Logger
	conn   *net.UDPConn
	store  *session.Store
	rules  *rules.Compiler
	dp     Datapath
	assocs map[string]*association // by node ID
	cache  responseCache
	now    func() time.Time
}

// New binds the N4 socket. Serve runs the server.
func New(cfg Config, store *session.Store, compiler *rules.Compiler, dp Datapath, log *slog.Logger) (*Server, error) {
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(cfg.Listen))
	if err != nil {
		return nil, fmt.Errorf("pfcp: listen on %s: %w", cfg.Listen, err)
	}
	if len(cfg.Peers) == 0 {
		log.Warn("pfcp: no peers configured: accepting requests from any SMF")
	}
	return &Server{
		cfg: cfg, log: log, conn: conn, store: store, rules: compiler, dp: dp,
		assocs: map[string]*association{},
		cache:  responseCache{entries: map[cacheKey]cached{}},
		now:    time.Now,
	}, nil
}

// Addr is where the server listens.
func (s *Server) Addr() netip.AddrPort { return s.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

type datagram struct {
	from netip.AddrPort
	b    []byte
}

// Serve handles requests until ctx ends, then closes the socket.
func (s *Server) Serve(ctx context.Context) error {
	in := make(chan datagram, 256)
	go s.read(in)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.conn.Close()
		case d, ok := <-in:
			if !ok {
				return errors.New("pfcp: socket closed")
			}
			s.handle(d)
		case <-tick.C:
			s.cache.expire(s.now())
		}
	}
}

func (s *Server) read(out chan<- datagram) {
	defer close(out)
	buf := make([]byte, 65535)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.log.Error("pfcp: read", "err", err)
			}
			return
		}
		out <- datagram{from: from, b: slices.Clone(buf[:n])}
	}
}

// handle answers one datagram. Requests from a peer that is not allowed
// are refused; a repeated request gets the response it got before.
func (s *Server) handle(d datagram) {
	h, err := message.ParseHeader(d.b)
	if err != nil {
		s.log.Debug("pfcp: discarded a datagram with no valid header", "from", d.from, "err", err)
		return
	}
	if h.Version() != 1 {
		s.send(d.from, message.NewVersionNotSupportedResponse(h.SequenceNumber))
		return
	}
	key := cacheKey{d.from, h.SequenceNumber}
	if b, ok := s.cache.get(key); ok {
		s.write(d.from, b)
		return
	}
	resp := s.respond(d, h)
	if resp == nil {
		return
	}
	b := make([]byte, resp.MarshalLen())
	if err := resp.MarshalTo(b); err != nil {
		s.log.Error("pfcp: encode response", "type", resp.MessageTypeName(), "err", err)
		return
	}
	s.cache.put(key, b, s.now())
	s.write(d.from, b)
}

func (s *Server) respond(d datagram, h *message.Header) message.Message {
	if !s.allowed(d.from.Addr()) {
		s.log.Warn("pfcp: request from a peer that is not allowed", "from", d.from, "type", h.Type)
		return refusal(h, session.CauseRequestRejected, 0, s.nodeID())
	}
	m, err := message.Parse(d.b)
	if err != nil {
		s.log.Info("pfcp: request does not decode", "from", d.from, "type", h.Type, "err", err)
		return refusal(h, session.CauseMandatoryIEIncorrect, 0, s.nodeID())
	}
	switch m := m.(type) {
	case *message.HeartbeatRequest:
		return message.NewHeartbeatResponse(h.SequenceNumber, ie.NewRecoveryTimeStamp(s.cfg.Recovery))
	case *message.AssociationSetupRequest:
		return s.associationSetup(d.from, m)
	case *message.AssociationUpdateRequest:
		return s.associationUpdate(d.from, m)
	case *message.AssociationReleaseRequest:
		return s.associationRelease(d.from, m)
	case *message.SessionEstablishmentRequest:
		return s.sessionEstablishment(d.from, m)
	case *message.SessionModificationRequest:
		return s.sessionModification(d.from, m)
	case *message.SessionDeletionRequest:
		return s.sessionDeletion(d.from, m)
	case *message.HeartbeatResponse, *message.SessionReportResponse, *message.NodeReportResponse:
		return nil // answers to our own requests
	}
	s.log.Info("pfcp: message type not handled", "from", d.from, "type", h.Type)
	return nil
}

func (s *Server) allowed(a netip.Addr) bool {
	return len(s.cfg.Peers) == 0 || slices.Contains(s.cfg.Peers, a.Unmap())
}

func (s *Server) send(to netip.AddrPort, m message.Message) {
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		s.log.Error("pfcp: encode", "type", m.MessageTypeName(), "err", err)
		return
	}
	s.write(to, b)
}

func (s *Server) write(to netip.AddrPort, b []byte) {
	if _, err := s.conn.WriteToUDPAddrPort(b, to); err != nil {
		s.log.Error("pfcp: send", "to", to, "err", err)
	}
}

func (s *Server) nodeID() *ie.IE { return nodeIDIE(s.cfg.NodeID) }

func nodeIDIE(id string) *ie.IE {
	if a, err := netip.ParseAddr(id); err == nil {
		if a.Is4() {
			return ie.NewNodeID(id, "", "")
		}
		return ie.NewNodeID("", id, "")
	}
	return ie.NewNodeID("", "", id)
}

// cacheKey is a request as the peer numbers it.
type cacheKey struct {
	from netip.AddrPort
	seq  uint32
}

type cached struct {
	b       []byte
	expires time.Time
}

// responseCache keeps responses long enough to outlive an SMF's
// retransmissions (T1 x N1 is seconds).
type responseCache struct{ entries map[cacheKey]cached }

const cacheFor = 30 * time.Second

func (c *responseCache) get(k cacheKey) ([]byte, bool) {
	e, ok := c.entries[k]
	return e.b, ok
}

func (c *responseCache) put(k cacheKey, b []byte, now time.Time) {
	c.entries[k] = cached{b, now.Add(cacheFor)}
}

func (c *responseCache) expire(now time.Time) {
	for k, e := range c.entries {
		if now.After(e.expires) {
			delete(c.entries, k)
		}
	}
}
