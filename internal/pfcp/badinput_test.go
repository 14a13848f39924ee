package pfcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// Our Recovery Time Stamp, and the SMF's, as newN4 and associate have them.
var (
	upRecovery  = time.Unix(1_700_000_000, 0)
	smfRecovery = time.Unix(1_600_000_000, 0)
)

// direct is a Server driven from the test goroutine: a datagram goes to
// handle as the reader would pass it, and the answer is read back on the
// SMF's socket. With no goroutine of its own the server's state can be
// read between requests, and reset gives a fresh server on the same
// datapath for a fraction of what a new namespace costs.
type direct struct {
	s     *Server
	dp    *datapath.Datapath
	rec   *recorder
	log   *recovered
	peers []netip.Prefix
	smf   *net.UDPConn
	from  netip.AddrPort // the SMF's socket, where answers go
	seq   uint32
}

// clock is the servers' time: usage reports carry it.
var clock = time.Unix(1_750_000_000, 0)

func newDirect(tb testing.TB, peers ...netip.Prefix) *direct {
	tb.Helper()
	dp := loadDatapath(tb, 1024)
	smf, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { smf.Close() })
	d := &direct{dp: dp, peers: peers, smf: smf, from: smf.LocalAddr().(*net.UDPAddr).AddrPort()}
	d.reset(tb)
	tb.Cleanup(func() { d.stop() })
	return d
}

// stop ends the server, which Serve never ran: its writer goroutine, once
// it has sent what is queued, then its socket. A server left running kept
// its half a megabyte of counters alive (Stats), and the fuzz test, which
// makes one a run, ran out of memory in minutes.
func (d *direct) stop() {
	close(d.s.out)
	<-d.s.wrote
	d.s.conn.Close()
}

// reset replaces the server with a new one, built as newN4 builds it,
// with a fresh store and compiler on the same datapath.
func (d *direct) reset(tb testing.TB) {
	tb.Helper()
	if d.s != nil {
		d.stop()
	}
	d.rec = &recorder{Datapath: d.dp, lookups: map[any]uint32{}}
	store, compiler := testRules(d.dp)
	cfg := Config{NodeID: "198.18.4.2", Listen: netip.MustParseAddrPort("127.0.0.1:0"), Peers: d.peers, Recovery: upRecovery}
	d.log = &recovered{}
	s, err := New(cfg, store, compiler, d.rec, slog.New(d.log))
	if err != nil {
		tb.Fatal(err)
	}
	s.now = func() time.Time { return clock }
	d.s, d.seq = s, 0
}

func (d *direct) next() uint32 { d.seq++; return d.seq }

// recovered keeps what the server logs of the panics it recovered from:
// the "panic" attribute of its records; it discards the rest.
type recovered struct{ panics []string }

func (r *recovered) Enabled(context.Context, slog.Level) bool { return true }
func (r *recovered) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "panic" {
			r.panics = append(r.panics, a.Value.String())
		}
		return true
	})
	return nil
}
func (r *recovered) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recovered) WithGroup(string) slog.Handler      { return r }

// mark follows every datagram: the server's socket sends it after handle
// returns, so whatever the SMF reads before it is what the datagram
// caused, and reading it alone proves there was nothing, with no timeout
// to wait for.
var mark = []byte("end of answer")

// ownRequests are the requests the server itself may send an SMF.
var ownRequests = map[uint8]bool{
	message.MsgTypeHeartbeatRequest:        true,
	message.MsgTypeAssociationSetupRequest: true,
	message.MsgTypeNodeReportRequest:       true,
	message.MsgTypeSessionReportRequest:    true,
}

// send hands b to the server and returns its answer, nil for none.
// Requests of the server's own that go with it are left aside.
func (d *direct) send(t *testing.T, b []byte) []byte {
	t.Helper()
	in := datagram{from: d.from, b: slices.Clone(b)}
	in.decode()
	d.s.handle(in)
	d.s.write(d.from, mark)
	d.s.flush() // as the serve loop does after each datagram
	var got []byte
	buf := make([]byte, 65535)
	for {
		d.smf.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, _, err := d.smf.ReadFromUDPAddrPort(buf)
		switch {
		case err != nil:
			t.Fatalf("reading the answer: %v", err)
		case bytes.Equal(buf[:n], mark):
			return got
		case n > 1 && ownRequests[buf[1]]:
		case got != nil:
			t.Fatalf("two answers to one datagram")
		default:
			got = slices.Clone(buf[:n])
		}
	}
}

// answer is a decoded response and what a test most often reads in it.
type answer struct {
	h         *message.Header
	m         message.Message
	cause     uint8  // 0: no Cause IE
	offending uint16 // 0: no Offending IE
}

func decodeAnswer(t *testing.T, b []byte) answer {
	t.Helper()
	m, err := message.Parse(b)
	if err != nil {
		t.Fatalf("the answer does not decode: %v (% x)", err, b)
	}
	h, _ := message.ParseHeader(b)
	ies, err := ie.ParseMultiIEs(h.Payload)
	if err != nil {
		t.Fatalf("the answer's IEs do not decode: %v", err)
	}
	a := answer{h: h, m: m}
	for _, i := range ies {
		switch i.Type {
		case ie.Cause:
			a.cause, _ = i.Cause()
		case ie.OffendingIE:
			a.offending, _ = i.OffendingIE()
		}
	}
	return a
}

// ask sends m and wants an answer.
func (d *direct) ask(t *testing.T, m message.Message) answer {
	t.Helper()
	b := d.send(t, encode(t, m))
	if b == nil {
		t.Fatalf("%s: no answer", m.MessageTypeName())
	}
	return decodeAnswer(t, b)
}

// accept asks and wants the request accepted.
func (d *direct) accept(t *testing.T, m message.Message) answer {
	t.Helper()
	a := d.ask(t, m)
	if a.h.Type != m.MessageType()+1 {
		t.Fatalf("%s: answered with %s", m.MessageTypeName(), a.m.MessageTypeName())
	}
	if a.cause != session.CauseAccepted {
		t.Fatalf("%s: cause %d, offending IE %d", m.MessageTypeName(), a.cause, a.offending)
	}
	return a
}

func (d *direct) associate(t *testing.T) {
	t.Helper()
	d.accept(t, message.NewAssociationSetupRequest(d.next(), smfNode, ie.NewRecoveryTimeStamp(smfRecovery)))
}

// establish sets up the session of establishment and returns our SEID.
func (d *direct) establish(t *testing.T, cpSEID uint64) uint64 {
	t.Helper()
	r := d.accept(t, establishment(d.next(), cpSEID)).m.(*message.SessionEstablishmentResponse)
	f, err := r.UPFSEID.FSEID()
	if err != nil {
		t.Fatalf("UP F-SEID: %v", err)
	}
	return f.SEID
}

// downlinkToGNB is the modification an SMF sends once the gNB answered:
// the downlink FAR of establishment forwards into the gNB's tunnel.
func downlinkToGNB(seq uint32, up uint64) *message.SessionModificationRequest {
	return message.NewSessionModificationRequest(0, 0, up, seq, 0,
		ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
			ie.NewUpdateForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
				ie.NewOuterHeaderCreation(0x0100, 0x200, "198.18.3.1", "", 0, 0, 0))))
}

// deleteAll deletes every session with Session Deletion Requests and
// wants nothing left of them: no session, no datapath entry, no slot.
func (d *direct) deleteAll(t *testing.T) {
	t.Helper()
	var seids []uint64
	d.s.store.Sessions(func(x *session.Session) bool { seids = append(seids, x.SEID); return true })
	for _, seid := range seids {
		d.accept(t, message.NewSessionDeletionRequest(0, 0, seid, d.next(), 0))
		if u := d.s.rules.URRSlots(seid); len(u) != 0 {
			t.Errorf("session %d deleted, its URR slots %v still taken", seid, u)
		}
	}
	if n := d.s.store.Len(); n != 0 {
		t.Errorf("%d sessions left after deleting them all", n)
	}
	if len(d.rec.lookups) != 0 {
		t.Errorf("datapath entries left with every session deleted: %v", d.rec.lookups)
	}
}

// serverState is what a refused request leaves as it was.
type serverState struct {
	sessions map[uint64]*session.Session // never changed in place: the same pointer is the same session
	assocs   map[string]assocState
	lookups  map[any]uint32
}

// assocState is what an association is: whom and which incarnation of it.
type assocState struct {
	addr     netip.AddrPort
	recovery time.Time
}

func (d *direct) state() serverState {
	s := serverState{sessions: map[uint64]*session.Session{}, assocs: map[string]assocState{}, lookups: maps.Clone(d.rec.lookups)}
	d.s.store.Sessions(func(x *session.Session) bool { s.sessions[x.SEID] = x; return true })
	for k, a := range d.s.assocs {
		s.assocs[k] = assocState{a.addr, a.recovery}
	}
	return s
}

// unchanged reports how now differs from before.
func unchanged(t *testing.T, before, now serverState) {
	t.Helper()
	if !maps.Equal(before.sessions, now.sessions) {
		t.Errorf("sessions changed: %d before, %d now", len(before.sessions), len(now.sessions))
	}
	if !maps.Equal(before.assocs, now.assocs) {
		t.Errorf("associations changed: %v before, %v now", before.assocs, now.assocs)
	}
	if !maps.Equal(before.lookups, now.lookups) {
		t.Errorf("datapath entries changed: %v before, %v now", before.lookups, now.lookups)
	}
}

// recorder passes datapath changes through and mirrors the lookup entries
// they leave (by local F-TEID or UE prefix, to the session), so that a
// test sees what a request did to the datapath.
type recorder struct {
	Datapath
	ops     int            // operations that ran
	lookups map[any]uint32 // datapath.UplinkKey or netip.Prefix -> session
}

func (r *recorder) Apply(ops []datapath.Op) error {
	err := r.Datapath.Apply(ops)
	ran := len(ops)
	if err != nil {
		ran = 0
		var ae *datapath.ApplyError
		if errors.As(err, &ae) {
			ran = ae.Done
		}
	}
	// Apply runs object writes, then lookup entries, then removals
	// (make-before-break); Done counts in that order.
	ordered := slices.Clone(ops)
	slices.SortStableFunc(ordered, func(a, b datapath.Op) int { return cmp.Compare(stage(a), stage(b)) })
	for _, op := range ordered[:ran] {
		switch o := op.(type) {
		case datapath.PutUplink:
			r.lookups[o.Key] = o.Rules.Session
		case datapath.PutDownlink:
			r.lookups[o.UE] = o.Rules.Session
		case datapath.DelUplink:
			delete(r.lookups, o.Key)
		case datapath.DelDownlink:
			delete(r.lookups, o.UE)
		}
	}
	r.ops += ran
	return err
}

func stage(op datapath.Op) int {
	switch op.(type) {
	case datapath.PutUplink, datapath.PutDownlink:
		return 1
	case datapath.DelUplink, datapath.DelDownlink:
		return 2
	}
	return 0
}

// strip is a grouped IE without any IE of type t, however deep.
func strip(i *ie.IE, t uint16) *ie.IE {
	var kids []*ie.IE
	for _, k := range i.ChildIEs {
		switch {
		case k.Type == t:
		case k.IsGrouped():
			kids = append(kids, strip(k, t))
		default:
			kids = append(kids, k)
		}
	}
	return ie.NewGroupedIE(i.Type, kids...)
}

// Ways to break a well-formed datagram.

func cutAt(n int) func([]byte) []byte { return func(b []byte) []byte { return b[:n] } }

// lengthOff adds delta to the header's Message Length, the datagram as it was.
func lengthOff(delta int) func([]byte) []byte {
	return func(b []byte) []byte {
		binary.BigEndian.PutUint16(b[2:], uint16(int(binary.BigEndian.Uint16(b[2:]))+delta))
		return b
	}
}

// withRaw appends raw IE bytes and keeps the header's Message Length right.
func withRaw(raw ...byte) func([]byte) []byte {
	return func(b []byte) []byte {
		b = append(b, raw...)
		binary.BigEndian.PutUint16(b[2:], uint16(len(b)-4))
		return b
	}
}

// afterIEs cuts a message right after its first n IEs.
func afterIEs(n int) func([]byte) []byte {
	return func(b []byte) []byte {
		h, _ := message.ParseHeader(b)
		end := len(b) - len(h.Payload)
		for range n {
			end += 4 + int(binary.BigEndian.Uint16(b[end+2:]))
		}
		return b[:end]
	}
}

// The answers TS 29.244 asks for: §7.6 (error handling), the cause values
// of §8.2.1, and the IE tables of §7.4 and §7.5, which say what is
// mandatory (M) and what conditional (C). A missing IE is named by the
// Offending IE (§8.2.22), a missing IE of a grouped IE by its own type.
// Each case runs on a fresh server with an association, and (but for the
// establishments, which would clash with it) the session of establishment.
// A refusal must leave all of it as it was: the same sessions, the same
// association, the datapath untouched; after it the session still takes a
// modification and a deletion, and a new session fits where it was.
// with is a grouped IE with kids added after its own.
func with(g *ie.IE, kids ...*ie.IE) *ie.IE {
	return ie.NewGroupedIE(g.Type, append(slices.Clone(g.ChildIEs), kids...)...)
}

func TestPrivilegedBadInput(t *testing.T) {
	d := newDirect(t)
	type request func(seq uint32, up uint64) message.Message
	est := func(change func(m *message.SessionEstablishmentRequest)) request {
		return func(seq uint32, _ uint64) message.Message {
			m := establishment(seq, 2)
			change(m)
			return m
		}
	}
	mod := func(ies ...*ie.IE) request {
		return func(seq uint32, up uint64) message.Message {
			return message.NewSessionModificationRequest(0, 0, up, seq, 0, ies...)
		}
	}
	del := func(seq uint32, up uint64) message.Message {
		return message.NewSessionDeletionRequest(0, 0, up, seq, 0)
	}
	setup := func(ies ...*ie.IE) request {
		return func(seq uint32, _ uint64) message.Message { return message.NewAssociationSetupRequest(seq, ies...) }
	}
	heartbeat := func(seq uint32, _ uint64) message.Message {
		return message.NewHeartbeatRequest(seq, ie.NewRecoveryTimeStamp(smfRecovery), nil)
	}
	otherNode := ie.NewNodeID("198.18.4.99", "", "")
	pdrTo := func(id uint16, ref *ie.IE) *ie.IE {
		return ie.NewCreatePDR(ie.NewPDRID(id), ie.NewPrecedence(10),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0)), ie.NewFARID(2), ref)
	}

	for _, c := range []struct {
		name      string
		known     string // how we answer otherwise: the case is skipped until fixed
		noSession bool   // establishments: the session of establishment would clash
		req       request
		patch     func([]byte) []byte // then done to the encoded request
		cause     uint8               // 0: no answer at all
		offending uint16
	}{
		// §7.6.3: too short for a header: silently discarded.
		{name: "shorter than any header", req: heartbeat, patch: cutAt(7)},
		{name: "S flag set, cut inside the SEID", req: del, patch: cutAt(12)},
		{name: "session header cut before its spare octet", req: del, patch: cutAt(15)},
		// §7.6.3: a request whose datagram is not as long as its header
		// says is answered with Invalid Length.
		{name: "header only, its length saying more", noSession: true, req: est(func(*message.SessionEstablishmentRequest) {}), patch: cutAt(16), cause: 68},
		{name: "establishment cut inside an IE", noSession: true, req: est(func(*message.SessionEstablishmentRequest) {}), patch: func(b []byte) []byte { return b[:len(b)-3] }, cause: 68},
		{name: "establishment cut between IEs", noSession: true, req: est(func(*message.SessionEstablishmentRequest) {}), patch: afterIEs(2), cause: 68},
		{name: "header length longer than the datagram", noSession: true, req: est(func(*message.SessionEstablishmentRequest) {}), patch: lengthOff(+4), cause: 68},
		{name: "header length shorter than the datagram", req: mod(), patch: lengthOff(-4), cause: 68},
		// An IE running past the end of the message has an invalid length
		// (cause 68, §8.2.1) and is the offending IE.
		{name: "CP F-SEID running past the end",
			noSession: true, req: est(func(m *message.SessionEstablishmentRequest) { m.CPFSEID = nil }),
			patch: withRaw(0, 57, 0, 25, 0x02, 0, 0, 0, 0, 0, 0, 0, 2, 198, 18, 4, 1), cause: 68, offending: ie.FSEID},
		// go-pfcp reads an IE with no octet after its Length as empty.
		{name: "CP F-SEID with only its Type and Length, at the end", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) { m.CPFSEID = nil }), patch: withRaw(0, 57, 0, 25),
			cause: 68, offending: ie.FSEID},
		// Inside a grouped IE, the IE that runs past the grouped one is at fault.
		{name: "PDI running past its Create PDR", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreatePDR = m.CreatePDR[1:] }),
			patch: withRaw(0, 1, 0, 8, 0, 2, 0, 9, 0, 20, 0, 1), cause: 68, offending: ie.PDI},
		{name: "vendor-specific IE too short for its Enterprise ID", req: mod(), patch: withRaw(0x80, 0x01, 0, 1, 7),
			cause: 68, offending: 0x8001},
		{name: "three octets after the last IE", req: mod(), patch: withRaw(0, 56, 0), cause: 68, offending: ie.PDRID},
		{name: "one octet after the last IE", req: mod(ie.NewPFCPSMReqFlags(0)), patch: withRaw(7), cause: 68},
		// IEs on which go-pfcp panics: the server recovers and refuses them,
		// naming the faulty IE as it does for others it cannot read.
		{name: "SDF Filter whose Flow Description runs past it",
			req: mod(ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(10),
				ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.New(ie.SDFFilter, []byte{0x01, 0, 0x27, 0x10, 'p'})), ie.NewFARID(1))),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.SDFFilter},
		{name: "Outer Header Creation too short for what its description asks",
			req: mod(ie.NewUpdateFAR(ie.NewFARID(2),
				ie.NewUpdateForwardingParameters(ie.New(ie.OuterHeaderCreation, []byte{0x00, 0xff, 0xff, 0xff, 0x89, 0xdd})))),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.OuterHeaderCreation},
		// §7.6.4, §7.6.5: unknown and unexpected messages are silently discarded.
		{name: "unknown message type", req: heartbeat, patch: func(b []byte) []byte { b[1] = 99; return b }},
		// §7.2.2.1: node messages carry no SEID, session messages one; a
		// message whose S flag says otherwise is discarded.
		{name: "heartbeat with the S flag set", req: heartbeat, patch: func(b []byte) []byte { b[0] |= 0x01; return b }},
		{name: "deletion with the S flag clear", req: del, patch: func(b []byte) []byte { b[0] &^= 0x01; return b }},
		{name: "a response where a request belongs", req: func(seq uint32, _ uint64) message.Message {
			return message.NewHeartbeatResponse(seq, ie.NewRecoveryTimeStamp(smfRecovery))
		}},

		// Association Setup Request (§7.4.4.1): Node ID and Recovery Time Stamp are M.
		// Association responses have no Offending IE (Tables 7.4.4.2-1,
		// 7.4.4.4-1, 7.4.4.6-1): the cause alone says what is wrong.
		{name: "association setup without Node ID", req: setup(ie.NewRecoveryTimeStamp(smfRecovery)),
			cause: session.CauseMandatoryIEMissing},
		{name: "association setup without Recovery Time Stamp", req: setup(smfNode),
			cause: session.CauseMandatoryIEMissing},
		{name: "association setup with a Node ID of no known type", req: setup(ie.New(ie.NodeID, []byte{7, 198, 18, 4, 1}), ie.NewRecoveryTimeStamp(smfRecovery)),
			cause: session.CauseMandatoryIEIncorrect},
		{name: "association setup with an IPv4 Node ID one octet long", req: setup(ie.New(ie.NodeID, []byte{0, 198}), ie.NewRecoveryTimeStamp(smfRecovery)),
			cause: session.CauseMandatoryIEIncorrect},
		{name: "association setup with an empty Recovery Time Stamp", req: setup(smfNode, ie.New(ie.RecoveryTimeStamp, nil)),
			cause: session.CauseMandatoryIEIncorrect},
		// §7.6.1: an unknown IE is discarded and the message processed.
		{name: "association setup with an unknown IE", req: setup(smfNode, ie.NewRecoveryTimeStamp(smfRecovery), ie.New(32000, []byte{1, 2, 3})),
			cause: session.CauseAccepted},
		// Association Update and Release Requests (§7.4.4.3, §7.4.4.5): Node ID is M.
		{name: "association update without Node ID", req: func(seq uint32, _ uint64) message.Message { return message.NewAssociationUpdateRequest(seq) },
			cause: session.CauseMandatoryIEMissing},
		{name: "association update from a node with no association",
			req:   func(seq uint32, _ uint64) message.Message { return message.NewAssociationUpdateRequest(seq, otherNode) },
			cause: session.CauseNoAssociation},
		{name: "association release without Node ID", req: func(seq uint32, _ uint64) message.Message { return message.NewAssociationReleaseRequest(seq, nil) },
			cause: session.CauseMandatoryIEMissing},
		{name: "association release from a node with no association",
			req: func(seq uint32, _ uint64) message.Message {
				return message.NewAssociationReleaseRequest(seq, otherNode)
			},
			cause: session.CauseNoAssociation},

		// Session Establishment Request (§7.5.2).
		{name: "establishment from a node with no association", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.NodeID = otherNode }),
			cause: session.CauseNoAssociation},
		{name: "establishment without Node ID", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.NodeID = nil }),
			cause: session.CauseMandatoryIEMissing, offending: ie.NodeID},
		{name: "establishment without CP F-SEID", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CPFSEID = nil }),
			cause: session.CauseMandatoryIEMissing, offending: ie.FSEID},
		{name: "CP F-SEID too short for its SEID", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CPFSEID = ie.New(ie.FSEID, []byte{0x02, 0, 0, 0}) }),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.FSEID},
		// §8.2.37: at least one of V4 and V6 is set.
		{name: "CP F-SEID with no address", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CPFSEID = ie.New(ie.FSEID, []byte{0, 0, 0, 0, 0, 0, 0, 0, 2})
			}),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.FSEID},
		{name: "no Create PDR", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreatePDR = nil }),
			cause: session.CauseMandatoryIEMissing, offending: ie.CreatePDR},
		{name: "no Create FAR", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreateFAR = nil }),
			cause: session.CauseMandatoryIEMissing, offending: ie.CreateFAR},
		// Create PDR (Table 7.5.2.2-1): PDR ID, Precedence and PDI are M,
		// FAR ID is C (it may come from a predefined rule or a MAR).
		{name: "Create PDR without PDR ID", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreatePDR[0] = strip(m.CreatePDR[0], ie.PDRID) }),
			cause: session.CauseMandatoryIEMissing, offending: ie.PDRID},
		{name: "Create PDR without Precedence", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreatePDR[0] = strip(m.CreatePDR[0], ie.Precedence) }),
			cause: session.CauseMandatoryIEMissing, offending: ie.Precedence},
		{name: "Create PDR without PDI", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreatePDR[0] = strip(m.CreatePDR[0], ie.PDI) }),
			cause: session.CauseMandatoryIEMissing, offending: ie.PDI},
		{name: "Create PDR without FAR ID", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreatePDR[0] = strip(m.CreatePDR[0], ie.FARID) }),
			cause: session.CauseConditionalIEMissing, offending: ie.FARID},
		// PDI (Table 7.5.2.2-2): Source Interface is M.
		{name: "PDI without Source Interface", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreatePDR[0] = strip(m.CreatePDR[0], ie.SourceInterface)
			}),
			cause: session.CauseMandatoryIEMissing, offending: ie.SourceInterface},
		// Create FAR (Table 7.5.2.3-1): FAR ID and Apply Action are M;
		// Forwarding Parameters C, with FORW; in them Destination Interface M.
		{name: "Create FAR without FAR ID", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreateFAR[0] = strip(m.CreateFAR[0], ie.FARID) }),
			cause: session.CauseMandatoryIEMissing, offending: ie.FARID},
		{name: "Create FAR without Apply Action", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreateFAR[0] = strip(m.CreateFAR[0], ie.ApplyAction) }),
			cause: session.CauseMandatoryIEMissing, offending: ie.ApplyAction},
		{name: "forwarding FAR without Forwarding Parameters", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateFAR[0] = strip(m.CreateFAR[0], ie.ForwardingParameters)
			}),
			cause: session.CauseConditionalIEMissing, offending: ie.ForwardingParameters},
		{name: "Forwarding Parameters without Destination Interface", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateFAR[0] = strip(m.CreateFAR[0], ie.DestinationInterface)
			}),
			cause: session.CauseMandatoryIEMissing, offending: ie.DestinationInterface},
		// Create QER (Table 7.5.2.5-1): QER ID and Gate Status are M.
		{name: "Create QER without QER ID", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreateQER[0] = strip(m.CreateQER[0], ie.QERID) }),
			cause: session.CauseMandatoryIEMissing, offending: ie.QERID},
		{name: "Create QER without Gate Status", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreateQER[0] = strip(m.CreateQER[0], ie.GateStatus) }),
			cause: session.CauseMandatoryIEMissing, offending: ie.GateStatus},
		// Create URR (Table 7.5.2.4-1): URR ID, Measurement Method and Reporting Triggers are M.
		{name: "Create URR without Measurement Method", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateURR[0] = strip(m.CreateURR[0], ie.MeasurementMethod)
			}),
			cause: session.CauseMandatoryIEMissing, offending: ie.MeasurementMethod},
		{name: "Create URR without Reporting Triggers", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateURR[0] = strip(m.CreateURR[0], ie.ReportingTriggers)
			}),
			cause: session.CauseMandatoryIEMissing, offending: ie.ReportingTriggers},
		// Create BAR (Table 7.5.2.6-1): BAR ID is M.
		{name: "Create BAR without BAR ID", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateBAR = ie.NewCreateBAR(ie.NewSuggestedBufferingPacketsCount(10))
			}),
			cause: session.CauseMandatoryIEMissing, offending: ie.BARID},
		// A rule naming one the session does not have cannot be created.
		{name: "PDR naming a FAR that is not there", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreateFAR = m.CreateFAR[:1] }),
			cause: session.CauseRuleFailure, offending: ie.FARID},
		{name: "PDR naming a QER that is not there", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreateQER = nil }),
			cause: session.CauseRuleFailure, offending: ie.QERID},
		{name: "PDR naming a URR that is not there", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreateURR = nil }),
			cause: session.CauseRuleFailure, offending: ie.URRID},
		{name: "FAR naming a BAR that is not there", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateFAR[1] = ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x0c), ie.NewBARID(9))
			}),
			cause: session.CauseRuleFailure, offending: ie.BARID},
		// Two rules of a kind with one ID: the second is incorrect.
		{name: "two PDRs with one ID", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreatePDR = append(m.CreatePDR, pdrTo(1, nil)) }),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.PDRID},
		{name: "two FARs with one ID", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateFAR = append(m.CreateFAR, ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x01)))
			}),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.FARID},
		{name: "two QERs with one ID", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateQER = append(m.CreateQER, ie.NewCreateQER(ie.NewQERID(1), ie.NewGateStatus(0, 0)))
			}),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.QERID},
		{name: "two URRs with one ID", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateURR = append(m.CreateURR, ie.NewCreateURR(ie.NewURRID(1), ie.NewMeasurementMethod(0, 1, 0), ie.NewReportingTriggers(0, 0, 0)))
			}),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.URRID},
		// §7.6.1: unknown IEs, anywhere, are discarded.
		{name: "establishment with an unknown IE", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.IEs = append(m.IEs, ie.New(32000, []byte{1})) }),
			cause: session.CauseAccepted},
		{name: "establishment with a vendor-specific IE", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.IEs = append(m.IEs, ie.NewVendorSpecificIE(32770, 18681, []byte{1, 2}))
			}),
			cause: session.CauseAccepted},
		{name: "Create PDR with an unknown IE inside", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreatePDR[0] = ie.NewGroupedIE(ie.CreatePDR, append(slices.Clone(m.CreatePDR[0].ChildIEs), ie.New(32001, []byte{9}))...)
			}),
			cause: session.CauseAccepted},
		// An IE that may occur once, twice: refused rather than one copy
		// winning (FORW then DROP would have dropped).
		{name: "establishment with an empty Node ID", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.NodeID = ie.New(ie.NodeID, nil) }),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.NodeID},
		{name: "two Node IDs", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.IEs = append(m.IEs, otherNode) }),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.NodeID},
		{name: "two CP F-SEIDs", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.IEs = append(m.IEs, ie.NewFSEID(3, net.IPv4(198, 18, 4, 1), nil))
			}),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.FSEID},
		{name: "Create PDR with two precedences", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreatePDR[1] = with(m.CreatePDR[1], ie.NewPrecedence(1))
			}),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.Precedence},
		{name: "Create PDR with two FAR IDs", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.CreatePDR[1] = with(m.CreatePDR[1], ie.NewFARID(1)) }),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.FARID},
		{name: "Create FAR with FORW then DROP", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateFAR[0] = with(m.CreateFAR[0], ie.NewApplyAction(0x01))
			}),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.ApplyAction},
		{name: "Forwarding Parameters with two outer headers", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateFAR[1] = ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
					ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
						ie.NewOuterHeaderCreation(0x0100, 0x200, "198.18.3.1", "", 0, 0, 0),
						ie.NewOuterHeaderCreation(0x0100, 0x300, "198.18.3.11", "", 0, 0, 0)))
			}),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.OuterHeaderCreation},
		// The spec allows several of these; the UPF acts on one.
		{name: "PDI with two UE addresses", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreatePDR[1] = ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(10),
					ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0),
						ie.NewUEIPAddress(0x06, "10.45.0.3", "", 0, 0)), ie.NewFARID(2))
			}),
			cause: session.CauseRuleFailure, offending: ie.UEIPAddress},
		{name: "PDI with two QFIs", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreatePDR[1] = ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(10),
					ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0),
						ie.NewQFI(5), ie.NewQFI(9)), ie.NewFARID(2))
			}),
			cause: session.CauseRuleFailure, offending: ie.QFI},
		// What the spec puts in a request and the UPF would not act on is
		// refused, never accepted and ignored.
		{name: "PDI with a Framed-Route", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreatePDR[1] = ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(10),
					ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, "10.45.0.2", "", 0, 0),
						ie.NewFramedRoute("10.46.0.0/24")), ie.NewFARID(2))
			}),
			cause: session.CauseRuleFailure, offending: ie.FramedRoute},
		{name: "Create URR with an event threshold", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateURR[0] = with(m.CreateURR[0], ie.NewEventThreshold(10))
			}),
			cause: session.CauseRuleFailure, offending: ie.EventThreshold},
		{name: "Create URR with a trigger the UPF does not act on (STOPT)", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateURR[0] = ie.NewCreateURR(ie.NewURRID(1), ie.NewMeasurementMethod(0, 1, 0), ie.NewReportingTriggers(0x20, 0, 0))
			}),
			cause: session.CauseRuleFailure, offending: ie.ReportingTriggers},
		{name: "Create FAR duplicating (DUPL)", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateFAR[0] = ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x12),
					ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore)))
			}),
			cause: session.CauseRuleFailure, offending: ie.ApplyAction},
		{name: "Create QER with a packet rate", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.CreateQER[0] = with(m.CreateQER[0], ie.NewPacketRate(0x03, 0, 100, 0, 100))
			}),
			cause: session.CauseRuleFailure, offending: ie.PacketRate},
		{name: "establishment with a user plane inactivity timer", noSession: true,
			req: est(func(m *message.SessionEstablishmentRequest) {
				m.IEs = append(m.IEs, ie.NewUserPlaneInactivityTimer(60*time.Second))
			}),
			cause: session.CauseServiceNotSupported, offending: ie.UserPlaneInactivityTimer},
		{name: "establishment of an Ethernet PDU session", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.PDNType = ie.NewPDNType(ie.PDNTypeEthernet) }),
			cause: session.CauseServiceNotSupported, offending: ie.PDNType},
		// RESTI: Open5GS restores its sessions into a restarted UPF.
		{name: "establishment restoring a session (RESTI)", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.PFCPSEReqFlags = ie.NewPFCPSEReqFlags(0x01) }),
			cause: session.CauseAccepted},
		{name: "establishment asking to pause charging (SUMPC)", noSession: true,
			req:   est(func(m *message.SessionEstablishmentRequest) { m.PFCPSEReqFlags = ie.NewPFCPSEReqFlags(0x02) }),
			cause: session.CauseServiceNotSupported, offending: ie.PFCPSEReqFlags},
		{name: "modification with a Query URR Reference", req: mod(ie.NewQueryURRReference(7)),
			cause: session.CauseServiceNotSupported, offending: ie.QueryURRReference},

		// Session Modification and Deletion Requests (§7.5.4, §7.5.6).
		{name: "modification of an unknown SEID", req: func(seq uint32, up uint64) message.Message { return downlinkToGNB(seq, up+100) },
			cause: session.CauseNoSession},
		{name: "deletion of an unknown SEID", req: func(seq uint32, up uint64) message.Message { return del(seq, up+100) },
			cause: session.CauseNoSession},
		{name: "removal of a PDR the session does not have", req: mod(ie.NewRemovePDR(ie.NewPDRID(9))),
			cause: session.CauseRuleFailure, offending: ie.PDRID},
		{name: "update of a FAR the session does not have", req: mod(ie.NewUpdateFAR(ie.NewFARID(9), ie.NewApplyAction(0x01))),
			cause: session.CauseRuleFailure, offending: ie.FARID},
		{name: "update of a PDR to a FAR that is not there", req: mod(ie.NewUpdatePDR(ie.NewPDRID(1), ie.NewFARID(9))),
			cause: session.CauseRuleFailure, offending: ie.FARID},
		{name: "removal of a FAR a PDR still names", req: mod(ie.NewRemoveFAR(ie.NewFARID(2))),
			cause: session.CauseRuleFailure, offending: ie.FARID},
		{name: "query of a URR the session does not have", req: mod(ie.NewQueryURR(ie.NewURRID(9))),
			cause: session.CauseRuleFailure, offending: ie.URRID},
		{name: "creation of a PDR with an ID the session has", req: mod(pdrTo(2, nil)),
			cause: session.CauseMandatoryIEIncorrect, offending: ie.PDRID},
		{name: "creation of a PDR naming a QER that is not there", req: mod(pdrTo(3, ie.NewQERID(9))),
			cause: session.CauseRuleFailure, offending: ie.QERID},
		{name: "creation of a FAR without Apply Action", req: mod(ie.NewCreateFAR(ie.NewFARID(3))),
			cause: session.CauseMandatoryIEMissing, offending: ie.ApplyAction},
		{name: "Update FAR without FAR ID", req: mod(ie.NewUpdateFAR(ie.NewApplyAction(0x01))),
			cause: session.CauseMandatoryIEMissing, offending: ie.FARID},
		{name: "Remove PDR without PDR ID", req: mod(ie.NewRemovePDR(nil)),
			cause: session.CauseMandatoryIEMissing, offending: ie.PDRID},
		{name: "modification with an unknown IE", req: mod(ie.New(32000, nil)),
			cause: session.CauseAccepted},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.known != "" {
				t.Skip("known: " + c.known)
			}
			d.reset(t)
			d.associate(t)
			var up uint64
			if !c.noSession {
				up = d.establish(t, 0xabc)
			}
			before, ops := d.state(), d.rec.ops

			seq := d.next()
			req := c.req(seq, up)
			b := encode(t, req)
			if c.patch != nil {
				b = c.patch(b)
			}
			got := d.send(t, b)
			if p := d.log.panics; len(p) > 0 && !codecPanics(b) {
				t.Errorf("the server recovered from a panic of its own: %v", p)
			}
			switch {
			case c.cause == 0 && got != nil:
				t.Fatalf("answered with % x, want no answer", got)
			case c.cause == 0:
			case got == nil:
				t.Fatalf("no answer, want cause %d", c.cause)
			default:
				a := decodeAnswer(t, got)
				if want := req.MessageType() + 1; a.h.Type != want || a.h.SequenceNumber != seq {
					t.Errorf("answered with type %d, sequence number %d; want %d and %d", a.h.Type, a.h.SequenceNumber, want, seq)
				}
				if a.cause != c.cause || a.offending != c.offending {
					t.Errorf("cause %d, offending IE %d; want %d and %d", a.cause, a.offending, c.cause, c.offending)
				}
			}
			if c.cause != session.CauseAccepted {
				unchanged(t, before, d.state())
				if d.rec.ops != ops {
					t.Errorf("%d datapath operations ran for a refused request", d.rec.ops-ops)
				}
			}

			if !c.noSession {
				d.accept(t, downlinkToGNB(d.next(), up))
			}
			d.deleteAll(t)
			d.establish(t, 0x777)
			d.deleteAll(t)
		})
	}

	// Only allowed peers are served; a session request from any other
	// cannot have an association (§6.2.6.1: No established PFCP Association).
	t.Run("peer not allowed", func(t *testing.T) {
		d := newDirect(t, netip.MustParsePrefix("198.18.4.1/32"))
		for _, c := range []struct {
			name  string
			known string
			req   func(seq uint32) message.Message
			cause uint8
		}{
			{"association setup", "", func(seq uint32) message.Message {
				return message.NewAssociationSetupRequest(seq, smfNode, ie.NewRecoveryTimeStamp(smfRecovery))
			}, session.CauseRequestRejected},
			{"session establishment", "", func(seq uint32) message.Message { return establishment(seq, 1) },
				session.CauseNoAssociation},
		} {
			t.Run(c.name, func(t *testing.T) {
				if c.known != "" {
					t.Skip("known: " + c.known)
				}
				a := d.ask(t, c.req(d.next()))
				if a.cause != c.cause || a.offending != 0 {
					t.Errorf("cause %d, offending IE %d; want %d and none", a.cause, a.offending, c.cause)
				}
				if len(d.s.assocs) != 0 || d.s.store.Len() != 0 || d.rec.ops != 0 {
					t.Errorf("%d associations, %d sessions, %d datapath operations after a refusal", len(d.s.assocs), d.s.store.Len(), d.rec.ops)
				}
			})
		}
	})

	// §7.6.3 over a real socket: what is too short for a header gets no
	// answer at all, and what follows is served as ever.
	t.Run("no header, no answer", func(t *testing.T) {
		n := newN4(t)
		hb := encode(t, message.NewHeartbeatRequest(n.next(), ie.NewRecoveryTimeStamp(smfRecovery), nil))
		dl := encode(t, message.NewSessionDeletionRequest(0, 0, 1, n.next(), 0))
		for _, b := range [][]byte{hb[:1], hb[:7], dl[:12], dl[:15]} {
			if _, err := n.smf.WriteToUDP(b, n.upf); err != nil {
				t.Fatal(err)
			}
		}
		n.smf.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if k, _, err := n.smf.ReadFromUDP(make([]byte, 65535)); err == nil {
			t.Fatalf("a %d-byte answer to a datagram with no header", k)
		} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
			t.Fatal(err)
		}
		if _, ok := n.ask(message.NewHeartbeatRequest(n.next(), ie.NewRecoveryTimeStamp(smfRecovery), nil)).(*message.HeartbeatResponse); !ok {
			t.Errorf("a heartbeat after them was not answered with a Heartbeat Response")
		}
	})
}

// A request is a retransmission only if it is the same request: a new
// one that reuses a sequence number within the cache's 30 s, as an SMF
// that restarted does from 1 on port 8805, gets its own answer
// (§6.4; §7.6.1 would have the reused number, not the message, be
// the fault).
func TestPrivilegedSequenceNumberReusedByAnotherRequest(t *testing.T) {
	d := newDirect(t)
	d.accept(t, message.NewAssociationSetupRequest(1, smfNode, ie.NewRecoveryTimeStamp(smfRecovery)))
	a := d.ask(t, message.NewHeartbeatRequest(1, ie.NewRecoveryTimeStamp(smfRecovery), nil))
	if _, ok := a.m.(*message.HeartbeatResponse); !ok {
		t.Errorf("a Heartbeat Request answered with %s", a.m.MessageTypeName())
	}
}
