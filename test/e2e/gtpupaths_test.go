package e2e

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// n9Config is upfd in the lab with N9 too, toward a peer UPF, and Echo
// often enough to see.
const n9Config = `node_id: 198.18.4.2
pfcp:
  listen: 198.18.4.2:8805
  peers: [198.18.4.1]
interfaces:
  - {name: n3, role: n3, address: 198.18.3.2}
  - {name: n6, role: n6}
  - {name: n9, role: n9, address: 198.18.9.2}
dnns:
  - {name: internet, pools: [10.45.0.0/16]}
teid_range: 0x100-0xffff
max_sessions: 1024
xdp_mode: native
gtpu:
  echo_interval: 200ms
  echo_retries: 100
`

var (
	upfN3   = netip.MustParseAddrPort("198.18.3.2:2152")
	upfN9   = netip.MustParseAddrPort("198.18.9.2:2152")
	peerUPF = "198.18.9.1"
)

// addPeerUPF joins a peer UPF's namespace to the lab's UPF by n9:
// 198.18.9.2 on the UPF's side, 198.18.9.1 on the peer's.
func addPeerUPF(t *testing.T, lab testenv.Lab) string {
	peer := testenv.Namespace(t, "sluice-n9peer")
	in := func(ns string, args ...string) { testenv.Sh(t, append([]string{"ip", "-n", ns}, args...)...) }
	in(lab.UPF, "link", "add", "n9", "address", testenv.MACN9.String(), "type", "veth", "peer", "name", "upf0", "netns", peer)
	in(peer, "link", "set", "upf0", "address", testenv.MACPeer.String())
	in(lab.UPF, "addr", "add", "198.18.9.2/24", "dev", "n9")
	in(peer, "addr", "add", "198.18.9.1/24", "dev", "upf0")
	in(lab.UPF, "link", "set", "n9", "up")
	in(peer, "link", "set", "upf0", "up")
	in(lab.UPF, "neigh", "replace", peerUPF, "lladdr", testenv.MACPeer.String(), "dev", "n9", "nud", "permanent")
	testenv.AttachPass(t, peer, "upf0") // G-PDUs redirected to it
	return peer
}

// TestPrivilegedUPFDGTPUFromEachPathsAddress: a gNB on N3 and a peer UPF
// on N9 each get their Echo Requests, End Markers and Error Indications
// from the address they know upfd by, the one their G-PDUs come from.
func TestPrivilegedUPFDGTPUFromEachPathsAddress(t *testing.T) {
	lab := testenv.NewLab(t)
	peer := addPeerUPF(t, lab)
	log, _ := testenv.StartUPFD(t, lab.UPF, n9Config)
	s := newSMF(t, lab)
	s.associate(log)
	gnb := testenv.ListenUDP(t, lab.GNB, "198.18.3.1:2152")
	upf2 := testenv.ListenUDP(t, peer, peerUPF+":2152")

	// An intermediate UPF's session: uplink on to the peer UPF over N9,
	// downlink to the gNB.
	est := s.ask(establishment(s.next(), "10.45.0.2", volumeURR(1))).(*message.SessionEstablishmentResponse)
	if c := cause(t, est.Cause); c != 1 {
		t.Fatalf("establishment: cause %d\n%s", c, log)
	}
	up, _ := est.UPFSEID.FSEID()
	teid := createdTEID(t, est)
	modify := func(step string, ies ...*ie.IE) {
		t.Helper()
		r := s.ask(message.NewSessionModificationRequest(0, 0, up.SEID, s.next(), 0, ies...)).(*message.SessionModificationResponse)
		if c := cause(t, r.Cause); c != 1 {
			t.Fatalf("%s: cause %d\n%s", step, c, log)
		}
	}
	toPeer := func(teid uint32, flags ...*ie.IE) *ie.IE {
		return ie.NewUpdateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02), ie.NewUpdateForwardingParameters(append([]*ie.IE{
			ie.NewDestinationInterface(ie.DstInterfaceCore), ie.NewOuterHeaderCreation(0x0100, teid, peerUPF, "", 0, 0, 0)}, flags...)...))
	}
	modify("uplink to the peer UPF", toPeer(0x900))

	t.Run("G-PDUs to the peer UPF leave from N9", func(t *testing.T) {
		sendUplink(t, gnb, teid, 0)
		b, from := awaitGTPU(t, upf2, 255)
		if from != upfN9 || binary.BigEndian.Uint32(b[4:]) != 0x900 {
			t.Errorf("G-PDU in TEID %#x from %v, want 0x900 from %v", binary.BigEndian.Uint32(b[4:]), from, upfN9)
		}
	})
	t.Run("echo to the gNB from N3", func(t *testing.T) {
		if _, from := awaitGTPU(t, gnb, 1); from != upfN3 {
			t.Errorf("Echo Request from %v, want %v", from, upfN3)
		}
	})
	t.Run("echo to the peer UPF from N9", func(t *testing.T) {
		if _, from := awaitGTPU(t, upf2, 1); from != upfN9 {
			t.Errorf("Echo Request from %v, want %v", from, upfN9)
		}
	})

	// Both paths switch (SNDEM): each old peer gets an End Marker for its
	// old tunnel from the address of its old path.
	sndem := ie.NewPFCPSMReqFlags(0x02)
	modify("path switch", toPeer(0x901, sndem),
		ie.NewUpdateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02), ie.NewUpdateForwardingParameters(
			ie.NewDestinationInterface(ie.DstInterfaceAccess), ie.NewOuterHeaderCreation(0x0100, 0x300, "198.18.3.11", "", 0, 0, 0), sndem)))
	for _, c := range []struct {
		name string
		at   *net.UDPConn
		teid uint32
		from netip.AddrPort
	}{
		{"end marker to the old gNB from N3", gnb, 0x200, upfN3},
		{"end marker to the old peer UPF tunnel from N9", upf2, 0x900, upfN9},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, from := awaitGTPU(t, c.at, 254)
			if from != c.from || binary.BigEndian.Uint32(b[4:]) != c.teid {
				t.Errorf("End Marker for TEID %#x from %v, want %#x from %v", binary.BigEndian.Uint32(b[4:]), from, c.teid, c.from)
			}
		})
	}

	// G-PDUs to no tunnel: the Error Indication comes from, and names, the
	// address each was sent to.
	for _, c := range []struct {
		name string
		at   *net.UDPConn
		to   netip.AddrPort
	}{
		{"error indication to the peer UPF from N9", upf2, upfN9},
		{"error indication to the gNB from N3", gnb, upfN3},
	} {
		t.Run(c.name, func(t *testing.T) {
			time.Sleep(10 * time.Millisecond) // past the datapath's spacing of unknown-TEID events
			g := gpdu(0xdead, udp4(netip.MustParseAddr("10.45.0.2"), netip.MustParseAddr("198.18.7.10"), 40000, 5001, 0))
			if _, err := c.at.WriteToUDPAddrPort(g, c.to); err != nil {
				t.Fatal(err)
			}
			b, from := awaitGTPU(t, c.at, 26)
			if from != c.to || !bytes.HasSuffix(b, c.to.Addr().AsSlice()) {
				t.Errorf("Error Indication % x from %v, want one from and naming %v", b, from, c.to.Addr())
			}
		})
	}
}

// gpdu is a G-PDU in teid with no extension header.
func gpdu(teid uint32, inner []byte) []byte {
	g := []byte{0x30, 0xff, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(g[2:], uint16(len(inner)))
	binary.BigEndian.PutUint32(g[4:], teid)
	return append(g, inner...)
}

// awaitGTPU reads until a GTP-U message of type typ comes, for at most 3 s,
// passing over others (Echo Requests come every 200 ms).
func awaitGTPU(t *testing.T, c *net.UDPConn, typ byte) ([]byte, netip.AddrPort) {
	t.Helper()
	buf := make([]byte, 2048)
	for deadline := time.Now().Add(3 * time.Second); ; {
		c.SetReadDeadline(deadline)
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatalf("no GTP-U message of type %d: %v", typ, err)
		}
		if n >= 8 && buf[1] == typ {
			return bytes.Clone(buf[:n]), netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		}
	}
}
