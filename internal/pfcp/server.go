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
	"hash/fnv"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/gtpu"
	"github.com/sluice-upf/sluice/internal/pfcp/decode"
	"github.com/sluice-upf/sluice/internal/report"
	"github.com/sluice-upf/sluice/internal/rules"
	"github.com/sluice-upf/sluice/internal/session"
)

// Config is what the server needs to know about itself.
type Config struct {
	NodeID   string         // an IPv4/IPv6 address or an FQDN
	Listen   netip.AddrPort // 8805 by convention
	Peers    []netip.Prefix // the SMFs served, by address or network; empty: any
	Recovery time.Time      // our Recovery Time Stamp: when we started
	// T1 and N1 pace our own requests: resent every T1, given up after
	// N1 sends. Zero: 3 s and 3.
	T1 time.Duration
	N1 int
	// BufferPackets bounds each session's downlink buffer when its BAR
	// suggests no count, BufferTotal all of them. Zero: 64 and 65536.
	BufferPackets, BufferTotal int
	// Heartbeat is how often each associated SMF is asked whether it is
	// there; 0: never, and peers are never declared lost. A peer that
	// leaves a heartbeat unanswered (HeartbeatRetries sends, T1 apart)
	// is lost; its sessions are kept PeerGrace, then deleted.
	Heartbeat, PeerGrace time.Duration
	HeartbeatRetries     int
	// Associate are SMFs we set up associations with ourselves.
	Associate []netip.AddrPort
	// EchoInterval paces GTP-U Echo Requests to every peer that sessions
	// send to (0: none); EchoRetries unanswered in a row is a path
	// failure, reported to every SMF in a Node Report.
	EchoInterval time.Duration
	EchoRetries  int
	// GTPU sends End Markers and Echo; nil: none are sent.
	GTPU GTPU
	// FinalReports: on shutdown, report every URR's usage to its SMF,
	// since the sessions end with the process (not when pinned).
	FinalReports bool
}

func (c *Config) setDefaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.T1 == 0 {
		c.T1 = 3 * time.Second
	}
	def(&c.N1, 3)
	def(&c.HeartbeatRetries, c.N1)
	def(&c.BufferPackets, 64)
	def(&c.BufferTotal, 65536)
}

// Datapath is what the server asks of the datapath.
type Datapath interface {
	Apply([]datapath.Op) error
	Usage(urrSlot uint32) (datapath.Usage, error)
	Events() (*datapath.EventReader, error)
	Reinject(frame []byte) (datapath.Verdict, error)
}

// GTPU sends the GTP-U messages N4 asks for, watches the paths to GTP-U
// peers with Echo, and hears their Error Indications.
type GTPU interface {
	EndMarker(from gtpu.Side, to netip.Addr, teid uint32) error
	ErrorIndication(from gtpu.Side, to netip.Addr, teid uint32) error
	SupportedExtensionHeaders(from gtpu.Side, to netip.Addr) error
	Echo(from gtpu.Side, to netip.Addr) error
	Received() <-chan gtpu.Received
}

// Server serves N4.
type Server struct {
	cfg    Config
	nodeIE *ie.IE // our Node ID, built once: every message carries it, none changes it
	log    *slog.Logger
	conn   *net.UDPConn
	store  *session.Store
	rules  *rules.Compiler
	dp     Datapath
	assocs map[string]*association // by node ID
	cache  responseCache
	now    func() time.Time

	meters  *report.Meters
	buffers *report.Buffers
	// Our own requests: the last sequence number, and those unanswered.
	seq       uint32
	pending   map[uint32]*pending
	usageSent map[uint32]sentUsage // what pending usage reports carry (reports.go)
	// kept is the final usage of lost peers' sessions, by node ID.
	kept      map[string]keptUsage
	nextSetup time.Time // of associations we set up
	// GTP-U paths watched with Echo, by peer address.
	gtpPaths map[netip.Addr]*gtpPath
	nextEcho time.Time

	// Datagrams to send, in order: those of the loop's turn (outbox),
	// handed with the turn's changes to the writer goroutine (flush),
	// which writes the changes to the journal, then sends; wrote closes
	// when it has sent the last.
	outbox []outgoing
	out    chan turn
	wrote  chan struct{}
	// keeper writes the state's changes to a journal; nil: none is kept.
	keeper *keeper

	// calls are functions run by the serve loop for Do; stopped closes
	// when Serve returns.
	calls   chan func()
	stopped chan struct{}
	stats   Stats
	api     apiState // what the REST API sets (view.go)
	// load is what upfd last said of its load (load.go).
	load loadState
	// quiet logs what may come in floods as counts (tally.go).
	quiet *tally
	// reportsOut are the Session Report Requests with usage in flight, by
	// peer address: bounded, so that a slow SMF is not buried (reports.go).
	reportsOut map[netip.Addr]int
}

type outgoing struct {
	to netip.AddrPort
	b  []byte
}

// New binds the N4 socket. Serve runs the server.
func New(cfg Config, store *session.Store, compiler *rules.Compiler, dp Datapath, log *slog.Logger) (*Server, error) {
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(cfg.Listen))
	if err != nil {
		return nil, fmt.Errorf("pfcp: listen on %s: %w", cfg.Listen, err)
	}
	// Room for an SMF's burst of pipelined requests (the kernel caps it at
	// net.core.rmem_max).
	conn.SetReadBuffer(8 << 20)
	cfg.setDefaults()
	s := &Server{
		cfg: cfg, nodeIE: nodeIDIE(cfg.NodeID), log: log, conn: conn, store: store, rules: compiler, dp: dp,
		assocs:     map[string]*association{},
		cache:      newResponseCache(),
		now:        time.Now,
		meters:     report.NewMeters(dp),
		buffers:    report.NewBuffers(cfg.BufferPackets, cfg.BufferTotal),
		pending:    map[uint32]*pending{},
		kept:       map[string]keptUsage{},
		gtpPaths:   map[netip.Addr]*gtpPath{},
		out:        make(chan turn, 1024),
		quiet:      newTally(log),
		reportsOut: map[netip.Addr]int{},
		wrote:      make(chan struct{}),
		calls:      make(chan func()),
		stopped:    make(chan struct{}),
	}
	go s.writeLoop()
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() netip.AddrPort { return s.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

// datagram is what came in, decoded by the reader goroutine so that the
// serve loop spends its time on sessions, not on the codec.
type datagram struct {
	from netip.AddrPort
	b    []byte
	h    *message.Header // nil: no valid header
	m    message.Message // nil: see err
	err  error           // why m did not decode
	// sum tells a retransmission from a new request that reuses its
	// sequence number.
	sum uint64
	// req is an Establishment or Modification Request in the session
	// engine's terms (*session.Establish, *session.Modify), or reqErr why
	// it cannot be: the reader decodes it, off the serve loop's path.
	req    any
	reqErr *session.Error
}

// decode parses the datagram. A request whose length differs from its
// header's (§7.6.3), or of a version we do not speak, is left undecoded:
// handle refuses it.
func (d *datagram) decode() {
	h, err := message.ParseHeader(d.b)
	if err != nil {
		d.err = err
		return
	}
	d.h = h
	sum := fnv.New64a()
	sum.Write(d.b)
	d.sum = sum.Sum64()
	if h.Flags>>5 != 1 || int(h.Length)+4 != len(d.b) { // not h.Version(): go-pfcp v0.0.24 always says 1
		return
	}
	switch {
	case h.Type == message.MsgTypeSessionEstablishmentRequest || h.Type == message.MsgTypeSessionModificationRequest:
		d.decodeSession(h)
	case handled[h.Type]:
		d.m, d.err = parse(d.b)
	}
}

// sessionMessage: types 50 to 99 are session messages, which carry a SEID
// (S = 1); node messages carry none (§7.2.2.1). A message that says
// otherwise is not the message its type names, and is discarded.
func sessionMessage(t uint8) bool { return t >= 50 && t < 100 }

// handled are the other message types the server reads; go-pfcp is not
// asked to parse any other, which it would log about on its own.
var handled = map[uint8]bool{
	message.MsgTypeHeartbeatRequest: true, message.MsgTypeAssociationSetupRequest: true,
	message.MsgTypeAssociationUpdateRequest: true, message.MsgTypeAssociationReleaseRequest: true,
	message.MsgTypeSessionDeletionRequest: true,
	message.MsgTypeHeartbeatResponse:      true, message.MsgTypeAssociationSetupResponse: true,
	message.MsgTypeNodeReportResponse: true, message.MsgTypeSessionReportResponse: true,
}

// decodeSession reads a session request into the session engine's terms.
// The serve loop answers first what depends on its state (association,
// session), then the refusal found here, if any.
func (d *datagram) decodeSession(h *message.Header) {
	defer func() {
		if r := recover(); r != nil { // go-pfcp panics on some malformed IEs
			d.req, d.reqErr = nil, &session.Error{Cause: session.CauseMandatoryIEIncorrect, Msg: fmt.Sprintf("codec panic: %v", r)}
		}
	}()
	ies, err := ie.ParseMultiIEs(h.Payload)
	if err != nil {
		d.err = err
		return
	}
	if h.Type == message.MsgTypeSessionEstablishmentRequest {
		d.req, d.reqErr = decode.Establish(h.Payload, ies)
	} else {
		d.req, d.reqErr = decode.Modify(h.SEID, h.Payload, ies)
	}
}

// parse decodes a message. go-pfcp v0.0.24 panics on some malformed IEs
// instead of returning an error: that is an error too.
func parse(b []byte) (m message.Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("codec panic: %v", r)
		}
	}()
	return message.Parse(b)
}

// tick paces retransmissions; reports fire on whole seconds of it.
const tick = 100 * time.Millisecond

// Serve handles requests and datapath events until ctx ends, then sends
// final reports if configured and closes the socket.
func (s *Server) Serve(ctx context.Context) error {
	defer close(s.stopped)
	in := make(chan datagram, 256)
	go s.read(in)
	events, stop, err := s.readEvents()
	if err != nil {
		return err
	}
	defer stop()
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	lastSecond := s.now()
	for {
		select {
		case <-ctx.Done():
			if s.cfg.FinalReports {
				s.finalReports(in)
			}
			s.flush()
			if s.keeper != nil {
				s.out <- turn{closed: true}
			}
			close(s.out)
			<-s.wrote
			return s.conn.Close()
		case d, ok := <-in:
			if !ok {
				return errors.New("pfcp: socket closed")
			}
			s.handle(d)
			s.handleQueued(in)
		case ev := <-events:
			s.event(ev)
		case f := <-s.calls:
			f()
		case r := <-s.gtpuReceived():
			if r.ErrorIndication {
				s.errorIndication(r)
			} else {
				s.pathAnswered(r.From)
			}
		case <-ticker.C:
			now := s.now()
			s.retransmit(now)
			s.paths(now)
			s.echo(now)
			s.reportDue(now)
			s.quiet.sum(now)
			if now.Sub(lastSecond) >= time.Second {
				lastSecond = now
				s.cache.expire(now)
			}
		}
		s.flush()
	}
}

// turnDatagrams bounds the datagrams one turn of the loop handles: those
// that came while it handled the first share one commit and one flush.
const turnDatagrams = 64

// handleQueued handles the datagrams already waiting, up to a turn's.
func (s *Server) handleQueued(in <-chan datagram) {
	for range turnDatagrams - 1 {
		select {
		case d, ok := <-in:
			if !ok {
				return // Serve finds it closed
			}
			s.handle(d)
		default:
			return
		}
	}
}

// ErrStopped is Do's answer once Serve has returned.
var ErrStopped = errors.New("pfcp: server stopped")

// Do runs f in the serve loop, between requests, so that f may read (not
// change) the server's sessions and associations. It waits for f to
// return, for ctx, or for Serve to end.
func (s *Server) Do(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case s.calls <- func() { f(); close(done) }:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stopped:
		return ErrStopped
	}
	<-done
	return nil
}

// readEvents reads the datapath's events into a channel until stop.
func (s *Server) readEvents() (<-chan datapath.Event, func(), error) {
	r, err := s.dp.Events()
	if err != nil {
		return nil, nil, err
	}
	out := make(chan datapath.Event, 1024)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := r.Read(time.Time{})
			if errors.Is(err, datapath.ErrNoEvent) {
				continue
			}
			if err != nil {
				return // closed
			}
			select {
			case out <- ev:
			case <-quit:
				return
			}
		}
	}()
	return out, func() { close(quit); r.Close(); <-done }, nil
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
		s.stats.received(buf[:n])
		d := datagram{from: from, b: slices.Clone(buf[:n])}
		d.decode()
		out <- d
	}
}

// handle answers one datagram. Requests from a peer that is not allowed
// are refused; a repeated request gets the response it got before.
func (s *Server) handle(d datagram) {
	h := d.h
	if h == nil {
		s.log.Debug("pfcp: discarded a datagram with no valid header", "from", d.from, "err", d.err)
		return
	}
	if h.Flags>>5 != 1 {
		s.send(d.from, message.NewVersionNotSupportedResponse(h.SequenceNumber))
		return
	}
	if sessionMessage(h.Type) != h.HasSEID() {
		s.quiet.note(slog.LevelInfo, "pfcp: discarded a message whose S flag does not fit its type", "from", d.from, "type", h.Type)
		return
	}
	s.heardFrom(d.from.Addr())
	if responses[h.Type] {
		if d.m != nil {
			s.answer(d.from, d.m)
		}
		return
	}
	key := keyOf(d.from, h.SequenceNumber)
	if b, ok := s.cache.get(key, d.sum); ok {
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
	if worthKeeping(h.Type, s.allowed(d.from.Addr())) {
		s.cache.put(key, d.sum, b, s.now().Add(cacheFor))
		s.keeper.response(key)
	}
	s.write(d.from, b)
}

// worthKeeping says whether a response is kept for a retransmission of
// its request: not a Heartbeat's, which is answered afresh at no cost and
// came 300,000 times in 6 s in a flood (the heap grew from 6 to 86 MB),
// nor a refusal to a peer that is not allowed, which anyone can make
// upfd write.
func worthKeeping(msgType uint8, allowed bool) bool {
	return allowed && msgType != message.MsgTypeHeartbeatRequest
}

func (s *Server) respond(d datagram, h *message.Header) (resp message.Message) {
	// go-pfcp v0.0.24 panics on some malformed IEs instead of returning an
	// error. Decoding comes before any change, so such a request is refused
	// as incorrect, and nothing of it applied.
	defer func() {
		if r := recover(); r != nil {
			s.quiet.note(slog.LevelInfo, "pfcp: request does not decode (codec panic)", "from", d.from, "type", h.Type, "panic", r)
			resp = refusal(h, session.CauseMandatoryIEIncorrect, 0, s.nodeID(), s.cfg.Recovery)
		}
	}()
	if !s.allowed(d.from.Addr()) {
		s.quiet.note(slog.LevelWarn, "pfcp: request from a peer that is not allowed", "from", d.from, "type", h.Type)
		return refusal(h, notAllowedCause(h.Type), 0, s.nodeID(), s.cfg.Recovery)
	}
	if int(h.Length)+4 != len(d.b) { // §7.6.3
		s.quiet.note(slog.LevelInfo, "pfcp: request length differs from its header's", "from", d.from, "type", h.Type,
			"header", int(h.Length)+4, "datagram", len(d.b))
		return refusal(h, session.CauseInvalidLength, 0, s.nodeID(), s.cfg.Recovery)
	}
	if d.err != nil {
		e := decode.ParseRefusal(h.Payload, d.err)
		s.quiet.note(slog.LevelInfo, "pfcp: request does not decode", "from", d.from, "type", h.Type, "err", d.err, "why", e.Msg)
		return refusal(h, e.Cause, e.IE, s.nodeID(), s.cfg.Recovery)
	}
	switch h.Type {
	case message.MsgTypeSessionEstablishmentRequest:
		return s.sessionEstablishment(d)
	case message.MsgTypeSessionModificationRequest:
		return s.sessionModification(d)
	}
	switch m := d.m.(type) {
	case *message.HeartbeatRequest:
		s.heartbeatStamp(d.from, m)
		return message.NewHeartbeatResponse(h.SequenceNumber, ie.NewRecoveryTimeStamp(s.cfg.Recovery))
	case *message.AssociationSetupRequest:
		return s.associationSetup(d.from, m)
	case *message.AssociationUpdateRequest:
		return s.associationUpdate(d.from, m)
	case *message.AssociationReleaseRequest:
		return s.associationRelease(d.from, m)
	case *message.SessionDeletionRequest:
		return s.sessionDeletion(d.from, m)
	}
	s.quiet.note(slog.LevelInfo, "pfcp: message type not handled", "from", d.from, "type", h.Type)
	return nil
}

// responses are the types that answer requests of ours: they match a
// pending request, never the response cache.
var responses = map[uint8]bool{
	message.MsgTypeHeartbeatResponse:        true,
	message.MsgTypeAssociationSetupResponse: true,
	message.MsgTypeNodeReportResponse:       true,
	message.MsgTypeSessionReportResponse:    true,
}

func (s *Server) allowed(a netip.Addr) bool {
	a = a.Unmap()
	return len(s.cfg.Peers) == 0 || slices.ContainsFunc(s.cfg.Peers, func(p netip.Prefix) bool { return p.Contains(a) })
}

// notAllowedCause refuses a request from a peer that is not allowed. Such
// a peer never has an association, so its session messages (types 50 to
// 99, §7.3) get what any without one gets: No established PFCP
// Association (§8.2.1). Node messages are rejected.
func notAllowedCause(msgType uint8) uint8 {
	if msgType >= message.MsgTypeSessionEstablishmentRequest && msgType < 100 {
		return session.CauseNoAssociation
	}
	return session.CauseRequestRejected
}

func (s *Server) send(to netip.AddrPort, m message.Message) {
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		s.log.Error("pfcp: encode", "type", m.MessageTypeName(), "err", err)
		return
	}
	s.write(to, b)
}

// write holds b until the end of the loop's turn (flush).
func (s *Server) write(to netip.AddrPort, b []byte) {
	s.outbox = append(s.outbox, outgoing{to: to, b: b})
}

// flush hands the turn's datagrams, with what the turn changed of the
// state, to the writer goroutine: the serve loop waits neither for the
// journal nor for the socket.
func (s *Server) flush() {
	var t turn
	if s.keeper != nil {
		t.changes, t.whole = s.collect()
	}
	if len(t.changes) == 0 && len(s.outbox) == 0 {
		return
	}
	t.out, s.outbox = s.outbox, nil
	s.out <- t
}

// writeLoop writes each turn's changes to the journal, then sends its
// datagrams. With fsync, the turns waiting share one sync.
func (s *Server) writeLoop() {
	defer close(s.wrote)
	batch := make([]turn, 0, turnsPerSync)
	for t := range s.out {
		batch = append(batch[:0], t)
		k := s.keeper
		if k != nil && k.fsync {
			batch = s.more(batch)
		}
		if k != nil {
			now := time.Now()
			for _, t := range batch {
				k.write(t, now, s.log)
			}
			if k.fsync {
				k.sync(s.log)
			}
		}
		for _, t := range batch {
			for _, o := range t.out {
				s.transmit(o)
			}
		}
		if k != nil {
			k.compactIfDue(time.Now(), s.log) // once the turns' datagrams are gone
		}
	}
}

// turnsPerSync bounds the turns one fsync covers.
const turnsPerSync = 64

// more adds to batch the turns already waiting.
func (s *Server) more(batch []turn) []turn {
	for len(batch) < turnsPerSync {
		select {
		case t, ok := <-s.out:
			if !ok {
				return batch
			}
			batch = append(batch, t)
		default:
			return batch
		}
	}
	return batch
}

func (s *Server) transmit(o outgoing) {
	s.stats.sent(o.b)
	if _, err := s.conn.WriteToUDPAddrPort(o.b, o.to); err != nil {
		s.log.Error("pfcp: send", "to", o.to, "err", err)
	}
}

func (s *Server) nodeID() *ie.IE { return s.nodeIE }

func nodeIDIE(id string) *ie.IE {
	if a, err := netip.ParseAddr(id); err == nil {
		if a.Is4() {
			return ie.NewNodeID(id, "", "")
		}
		return ie.NewNodeID("", id, "")
	}
	return ie.NewNodeID("", "", id)
}
