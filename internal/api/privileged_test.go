package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/api"
	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/pfcp"
	"github.com/sluice-upf/sluice/internal/rules"
	"github.com/sluice-upf/sluice/internal/session"
	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/pkt"
)

// The real thing: a pfcp.Server with a real datapath in a UPF namespace,
// sessions set up over UDP by an SMF made of go-pfcp messages, traffic
// run through the XDP programs, and every endpoint's answer held to
// openapi.yaml and to what was done.

var (
	addrN3   = netip.MustParseAddr("198.18.3.2")
	addrGNB  = netip.MustParseAddr("198.18.3.1")
	addrDN   = netip.MustParseAddr("198.18.7.10")
	recovery = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	smfNode  = ie.NewNodeID("198.18.4.1", "", "")
)

// upf is the server under test and its datapath's namespace.
type upf struct {
	srv *pfcp.Server
	dp  *datapath.Datapath
	ns  string
}

func startUPF(t *testing.T) upf {
	t.Helper()
	ns := testenv.UPF(t)
	var d *datapath.Datapath
	err := netns.Do(ns, func() (err error) {
		d, err = datapath.Load(datapath.Options{
			Interfaces: []datapath.Interface{{Name: "n3", Role: datapath.N3}, {Name: "n6", Role: datapath.N6}},
			GTPUAddrs:  []netip.Addr{addrN3}, MaxSessions: 1024,
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	store := session.NewStore(session.Options{TEIDFirst: 0x100, TEIDLast: 0xffff, AccessAddrs: []netip.Addr{addrN3},
		Pools: map[string][]netip.Prefix{"internet": {netip.MustParsePrefix("10.45.0.0/16")}}, MaxSessions: 1000})
	compiler := rules.NewCompiler(rules.Interfaces{Endpoints: []netip.Addr{addrN3}, Access: []netip.Addr{addrN3}}, d.Sizes())
	// Heartbeats every 300 ms, given up after two sends 100 ms apart; the
	// sessions of a lost peer are kept an hour, longer than the test.
	srv, err := pfcp.New(pfcp.Config{NodeID: "198.18.4.2", Listen: netip.MustParseAddrPort("127.0.0.1:0"), Recovery: recovery,
		Heartbeat: 300 * time.Millisecond, T1: 100 * time.Millisecond, N1: 2, PeerGrace: time.Hour},
		store, compiler, d, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return upf{srv, d, ns}
}

// smf is a PFCP client on loopback. It answers the server's heartbeats
// while alive is set, and hands every other message to ask.
type smf struct {
	t     *testing.T
	conn  *net.UDPConn
	upf   *net.UDPAddr
	seq   uint32
	alive atomic.Bool
	in    chan message.Message
}

func newSMF(t *testing.T, upf netip.AddrPort) *smf {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &smf{t: t, conn: conn, upf: net.UDPAddrFromAddrPort(upf), in: make(chan message.Message, 64)}
	s.alive.Store(true)
	done := make(chan struct{})
	go s.read(done)
	t.Cleanup(func() { conn.Close(); <-done })
	return s
}

func (s *smf) read(done chan struct{}) {
	defer close(done)
	buf := make([]byte, 65535)
	for {
		n, _, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		m, err := message.Parse(buf[:n])
		if err != nil {
			continue
		}
		if hb, ok := m.(*message.HeartbeatRequest); ok {
			if s.alive.Load() {
				s.send(message.NewHeartbeatResponse(hb.Sequence(), ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0))))
			}
			continue
		}
		select {
		case s.in <- m:
		default: // nobody asked
		}
	}
}

func (s *smf) send(m message.Message) {
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err == nil {
		s.conn.WriteToUDP(b, s.upf)
	}
}

// ask sends a request and waits for the response with its sequence number.
func (s *smf) ask(newReq func(seq uint32) message.Message) message.Message {
	s.t.Helper()
	s.seq++
	s.send(newReq(s.seq))
	timeout := time.After(2 * time.Second)
	for {
		select {
		case m := <-s.in:
			if m.Sequence() == s.seq {
				return m
			}
		case <-timeout:
			s.t.Fatalf("no response to request %d", s.seq)
		}
	}
}

func cause(t *testing.T, m message.Message) uint8 {
	t.Helper()
	var c *ie.IE
	switch m := m.(type) {
	case *message.AssociationSetupResponse:
		c = m.Cause
	case *message.SessionEstablishmentResponse:
		c = m.Cause
	case *message.SessionModificationResponse:
		c = m.Cause
	}
	if c == nil {
		t.Fatalf("%T without a cause", m)
	}
	v, _ := c.Cause()
	return v
}

func (s *smf) associate() {
	s.t.Helper()
	r := s.ask(func(seq uint32) message.Message {
		return message.NewAssociationSetupRequest(seq, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0)))
	})
	if c := cause(s.t, r); c != session.CauseAccepted {
		s.t.Fatalf("association setup: cause %d", c)
	}
}

// establish asks for an Open5GS-like session for ue: uplink on an F-TEID
// the UPF chooses, downlink buffered until the gNB is known, a QER with
// QFI 9, a volume URR counting both. It returns the response.
func (s *smf) establish(cpSEID uint64, ue string) *message.SessionEstablishmentResponse {
	s.t.Helper()
	return s.ask(func(seq uint32) message.Message {
		return message.NewSessionEstablishmentRequest(0, 0, 0, seq, 0,
			smfNode,
			ie.NewFSEID(cpSEID, net.IPv4(198, 18, 4, 1), nil),
			ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
				ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0d, 0, nil, nil, 5),
					ie.NewNetworkInstance("internet"), ie.NewUEIPAddress(0x02, ue, "", 0, 0)),
				ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1), ie.NewQERID(1), ie.NewURRID(1)),
			ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(255),
				ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewNetworkInstance("internet"),
					ie.NewUEIPAddress(0x06, ue, "", 0, 0)),
				ie.NewFARID(2), ie.NewQERID(1), ie.NewURRID(1)),
			ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02),
				ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), ie.NewNetworkInstance("internet"))),
			ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x0c)),
			ie.NewCreateQER(ie.NewQERID(1), ie.NewGateStatus(0, 0), ie.NewMBR(100000, 200000), ie.NewQFI(9)),
			ie.NewCreateURR(ie.NewURRID(1), ie.NewMeasurementMethod(0, 1, 0), ie.NewReportingTriggers(0x00, 0x00, 0x00)),
		)
	}).(*message.SessionEstablishmentResponse)
}

// established is a session as the SMF knows it.
type established struct {
	seid uint64 // the UPF's
	teid uint32 // the uplink F-TEID the UPF chose
}

func (s *smf) mustEstablish(cpSEID uint64, ue string) established {
	s.t.Helper()
	r := s.establish(cpSEID, ue)
	if c := cause(s.t, r); c != session.CauseAccepted {
		s.t.Fatalf("establishment of %s: cause %d", ue, c)
	}
	f, err := r.UPFSEID.FSEID()
	if err != nil {
		s.t.Fatal(err)
	}
	kids, _ := r.CreatedPDR[0].CreatedPDR()
	for _, k := range kids {
		if k.Type == ie.FTEID {
			ft, _ := k.FTEID()
			return established{f.SEID, ft.TEID}
		}
	}
	s.t.Fatal("no created F-TEID")
	return established{}
}

// toGNB has a session's downlink forwarded into the gNB's tunnel teid.
func (s *smf) toGNB(seid uint64, teid uint32) {
	s.t.Helper()
	r := s.ask(func(seq uint32) message.Message {
		return message.NewSessionModificationRequest(0, 0, seid, seq, 0,
			ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
				ie.NewUpdateForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
					ie.NewOuterHeaderCreation(0x0100, teid, addrGNB.String(), "", 0, 0, 0))))
	})
	if c := cause(s.t, r); c != session.CauseAccepted {
		s.t.Fatalf("modification of %#x: cause %d", seid, c)
	}
}

// xdpMD is struct xdp_md, BPF_PROG_RUN's context.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// run passes frames through role's program as if they arrived on dev.
func (u upf) run(t *testing.T, role datapath.Role, dev string, frames ...[]byte) {
	t.Helper()
	err := netns.Do(u.ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		for _, f := range frames {
			out := make([]byte, len(f)+256)
			opts := &ebpf.RunOptions{Data: f, DataOut: out, Context: xdpMD{DataEnd: uint32(len(f)), IngressIfindex: uint32(ifc.Index)}}
			if _, err := u.dp.Program(role).Run(opts); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("run frames through %s: %v", role, err)
	}
}

// Frames of a 64-byte UDP payload: 92 bytes of IP, as URRs count them.
const payload, ipLen = 64, pkt.IPv4Len + pkt.UDPLen + 64

func uplink(teid uint32, ue netip.Addr) []byte {
	return pkt.Frame{Dst: testenv.MACN3, Src: testenv.MACGNB,
		Tunnel: &pkt.Tunnel{Src: addrGNB, Dst: addrN3, TEID: teid, QFI: 9, Uplink: true},
		From:   netip.AddrPortFrom(ue, 40000), To: netip.AddrPortFrom(addrDN, 5001), Payload: make([]byte, payload)}.Bytes()
}

func downlink(ue netip.Addr) []byte {
	return pkt.Frame{Dst: testenv.MACN6, Src: testenv.MACRouter,
		From: netip.AddrPortFrom(addrDN, 5001), To: netip.AddrPortFrom(ue, 40000), Payload: make([]byte, payload)}.Bytes()
}

func repeat(frame []byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = frame
	}
	return out
}

func TestPrivilegedAPIOnARealUPF(t *testing.T) {
	u := startUPF(t)
	smf := newSMF(t, u.srv.Addr())
	smf.associate()
	ues := []string{"10.45.0.2", "10.45.0.3", "10.45.0.4"}
	var sess []established
	for i, ue := range ues {
		sess = append(sess, smf.mustEstablish(0xa0+uint64(i), ue))
	}
	smf.toGNB(sess[0].seid, 0x200)

	// Traffic of the first session: 5 up, 3 down; one G-PDU for a TEID
	// nobody has.
	ue := netip.MustParseAddr(ues[0])
	up, down := uplink(sess[0].teid, ue), downlink(ue)
	u.run(t, datapath.N3, "n3", append(repeat(up, 5), uplink(0xdead, ue))...)
	u.run(t, datapath.N6, "n6", repeat(down, 3)...)

	k := newContract(t, api.New(api.Options{N4: u.srv, Datapath: u.dp, Version: "v-test", Token: "s3cret"}))
	get := func(path string, want int) []byte { return k.do(call{method: "GET", path: path}, want) }

	t.Run("health, readiness and version", func(t *testing.T) {
		get("/api/v1/health", 200)
		if r := decode[api.Readiness](t, get("/api/v1/ready", 200)); !r.Ready || r.N4 != "serving" || r.Draining {
			t.Errorf("readiness %+v", r)
		}
		v := decode[api.Version](t, get("/api/v1/version", 200))
		if v.Version != "v-test" || v.NodeID != "198.18.4.2" || !v.Started.Equal(recovery) {
			t.Errorf("version %+v", v)
		}
	})

	t.Run("associations", func(t *testing.T) {
		as := decode[api.Associations](t, get("/api/v1/associations", 200)).Associations
		if len(as) != 1 {
			t.Fatalf("%d associations, want 1", len(as))
		}
		a := as[0]
		if a.NodeID != "198.18.4.1" || a.State != "up" || a.LostSince != nil || a.Sessions != 3 ||
			!a.Recovery.Equal(time.Unix(1_600_000_000, 0)) || a.Address != smf.conn.LocalAddr().String() || time.Since(a.Since) > time.Minute {
			t.Errorf("association %+v", a)
		}
	})

	t.Run("session list", func(t *testing.T) {
		l := decode[api.SessionList](t, get("/api/v1/sessions", 200))
		var seids []string
		for _, s := range l.Sessions {
			seids = append(seids, s.SEID)
		}
		want := []string{fmt.Sprintf("%#x", sess[0].seid), fmt.Sprintf("%#x", sess[1].seid), fmt.Sprintf("%#x", sess[2].seid)}
		if !slices.Equal(seids, want) || l.Total != 3 || l.NextCursor != "" {
			t.Errorf("sessions %v, total %d, next %q; want %v, 3, none", seids, l.Total, l.NextCursor, want)
		}
		s := l.Sessions[0]
		if s.CPSEID != "0xa0" || s.Peer != "198.18.4.1" || !slices.Equal(s.UEAddresses, []string{"10.45.0.2"}) ||
			!slices.Equal(s.FTEIDs, []api.FTEID{{TEID: sess[0].teid, IPv4: "198.18.3.2"}}) ||
			!slices.Equal(s.Tunnels, []api.Tunnel{{TEID: 0x200, Peer: "198.18.3.1", Port: 2152}}) || s.PDRs != 2 || s.URRs != 1 {
			t.Errorf("first session %+v", s)
		}
		page := decode[api.SessionList](t, get("/api/v1/sessions?limit=2", 200))
		if len(page.Sessions) != 2 || page.NextCursor != want[1] {
			t.Errorf("first page of 2: %d sessions, next %q", len(page.Sessions), page.NextCursor)
		}
		last := decode[api.SessionList](t, get("/api/v1/sessions?limit=2&cursor="+page.NextCursor, 200))
		if len(last.Sessions) != 1 || last.Sessions[0].SEID != want[2] || last.NextCursor != "" {
			t.Errorf("second page: %+v", last)
		}
		for _, c := range []struct{ query, want string }{
			{"ue=10.45.0.3", want[1]},
			{fmt.Sprintf("teid=%#x", sess[2].teid), want[2]},
			{"teid=512", want[0]}, // the gNB's 0x200
			{"peer=198.18.4.1&ue=10.45.0.4", want[2]},
		} {
			l := decode[api.SessionList](t, get("/api/v1/sessions?"+c.query, 200))
			if len(l.Sessions) != 1 || l.Sessions[0].SEID != c.want {
				t.Errorf("?%s: %+v, want only %s", c.query, l.Sessions, c.want)
			}
		}
		if l := decode[api.SessionList](t, get("/api/v1/sessions?peer=198.18.4.9", 200)); len(l.Sessions) != 0 || l.Total != 0 {
			t.Errorf("another peer's sessions: %+v", l)
		}
		k.do(call{method: "GET", path: "/api/v1/sessions?limit=lots", bad: true}, 400)
	})

	t.Run("one session with live counters", func(t *testing.T) {
		for _, path := range []string{fmt.Sprintf("/api/v1/sessions/%#x", sess[0].seid), fmt.Sprintf("/api/v1/sessions/%d", sess[0].seid)} {
			s := decode[api.Session](t, get(path, 200))
			if len(s.PDRs) != 2 || len(s.FARs) != 2 || len(s.QERs) != 1 || len(s.URRs) != 1 {
				t.Fatalf("session %+v", s)
			}
			if p := s.PDRs[0]; p.SourceInterface != "access" || p.FTEID == nil || p.FTEID.TEID != sess[0].teid ||
				p.OuterHeaderRemoval != "gtp-u/udp/ipv4" || p.UEIP == nil || p.UEIP.Direction != "source" {
				t.Errorf("uplink PDR %+v", p)
			}
			if f := s.FARs[1]; !slices.Equal(f.ApplyAction, []string{"FORW"}) || f.Forwarding == nil ||
				f.Forwarding.OuterHeaderCreation == nil || *f.Forwarding.OuterHeaderCreation != (api.Tunnel{TEID: 0x200, Peer: "198.18.3.1", Port: 2152}) {
				t.Errorf("downlink FAR %+v", f)
			}
			if q := s.QERs[0]; q.QFI != 9 || q.MBR != (api.BitRates{Uplink: 100_000_000, Downlink: 200_000_000}) || q.Gate.Uplink != "open" {
				t.Errorf("QER %+v", q)
			}
			want := api.Usage{Uplink: api.Traffic{Packets: 5, Bytes: 5 * ipLen}, Downlink: api.Traffic{Packets: 3, Bytes: 3 * ipLen}}
			if got := s.URRs[0].Usage; got != want {
				t.Errorf("URR usage %+v, want %+v", got, want)
			}
		}
		quiet := decode[api.Session](t, get(fmt.Sprintf("/api/v1/sessions/%#x", sess[1].seid), 200))
		if quiet.URRs[0].Usage != (api.Usage{}) || !slices.Equal(quiet.FARs[1].ApplyAction, []string{"BUFF", "NOCP"}) {
			t.Errorf("session without traffic: URR %+v, FAR %+v", quiet.URRs[0], quiet.FARs[1])
		}
	})

	t.Run("unknown session", func(t *testing.T) {
		e := decode[api.Error](t, get("/api/v1/sessions/0x99999", 404))
		if e.Error == "" {
			t.Error("404 without a message")
		}
		k.do(call{method: "GET", path: "/api/v1/sessions/nope", bad: true}, 400)
	})

	t.Run("datapath statistics", func(t *testing.T) {
		s := decode[api.Stats](t, get("/api/v1/stats", 200))
		if s.Verdicts != (api.Verdicts{Redirected: 8, Dropped: 1}) {
			t.Errorf("verdicts %+v, want 8 redirected and 1 dropped", s.Verdicts)
		}
		if len(s.Drops) != 1 || s.Drops["no_session"] != 1 {
			t.Errorf("drops %v, want one no_session", s.Drops)
		}
		upLen, downLen := uint64(len(up)), uint64(len(down))
		want := map[string]api.InterfaceStats{
			// Downlink leaves N3 in a G-PDU of the same size as the uplink's.
			"n3": {Rx: api.Traffic{Packets: 6, Bytes: 6 * upLen}, Tx: api.Traffic{Packets: 3, Bytes: 3 * upLen}},
			"n6": {Rx: api.Traffic{Packets: 3, Bytes: 3 * downLen}, Tx: api.Traffic{Packets: 5, Bytes: 5 * downLen}},
			"n9": {},
		}
		for role, w := range want {
			if got := s.Interfaces[role]; got != w {
				t.Errorf("%s: %+v, want %+v", role, got, w)
			}
		}
	})

	t.Run("drain refuses new sessions and keeps the rest", func(t *testing.T) {
		if d := decode[api.Drain](t, get("/api/v1/drain", 200)); d.Draining {
			t.Fatal("draining before anyone asked")
		}
		on := call{method: "PUT", path: "/api/v1/drain", body: `{"draining": true}`}
		k.do(on, 401) // no token
		bad := on
		bad.token = "guess"
		k.do(bad, 401)
		on.token = "s3cret"
		if d := decode[api.Drain](t, k.do(on, 200)); !d.Draining {
			t.Fatal("drain on answered draining false")
		}
		if r := decode[api.Readiness](t, get("/api/v1/ready", 200)); !r.Ready || !r.Draining {
			t.Errorf("readiness while draining %+v, want ready and draining", r)
		}
		if c := cause(t, smf.establish(0xb0, "10.45.0.9")); c != session.CauseNoResources {
			t.Errorf("establishment while draining: cause %d, want %d (No resources available)", c, session.CauseNoResources)
		}
		smf.toGNB(sess[1].seid, 0x201) // existing sessions are still modified
		u.run(t, datapath.N3, "n3", up)
		s := decode[api.Session](t, get(fmt.Sprintf("/api/v1/sessions/%#x", sess[0].seid), 200))
		if got := s.URRs[0].Usage.Uplink.Packets; got != 6 {
			t.Errorf("uplink while draining: %d packets counted, want 6", got)
		}
		off := on
		off.body = `{"draining": false}`
		if d := decode[api.Drain](t, k.do(off, 200)); d.Draining {
			t.Fatal("drain off answered draining true")
		}
		smf.mustEstablish(0xb1, "10.45.0.9")
		if l := decode[api.SessionList](t, get("/api/v1/sessions?limit=1", 200)); l.Total != 4 {
			t.Errorf("%d sessions after drain off and one establishment, want 4", l.Total)
		}
	})

	t.Run("writes refused without a configured token", func(t *testing.T) {
		ro := newContract(t, api.New(api.Options{N4: u.srv, Datapath: u.dp}))
		e := decode[api.Error](t, ro.do(call{method: "PUT", path: "/api/v1/drain", body: `{"draining": true}`, token: "s3cret"}, 403))
		if u.srv.Draining() || e.Error == "" {
			t.Errorf("a write without api.token: draining %v, error %q", u.srv.Draining(), e.Error)
		}
	})

	t.Run("a peer that stops answering heartbeats is lost", func(t *testing.T) {
		smf.alive.Store(false)
		deadline := time.Now().Add(5 * time.Second)
		for {
			a := decode[api.Associations](t, get("/api/v1/associations", 200)).Associations[0]
			if a.State == "lost" {
				if a.LostSince == nil || a.Sessions != 4 {
					t.Errorf("lost association %+v: want lost_since and its 4 sessions kept", a)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("association still %q 5 s after the SMF went silent", a.State)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	get("/api/v1/openapi.yaml", 200)
	k.allExercised()
}
