package gtpu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
)

var (
	n3, n3v6 = netip.MustParseAddr("198.18.3.2"), netip.MustParseAddr("2001:2:0:3::2")
	n9, n9v6 = netip.MustParseAddr("198.18.9.2"), netip.MustParseAddr("2001:2:0:9::2")
	gnb      = netip.MustParseAddr("198.18.3.1")
	gnbV6    = netip.MustParseAddr("2001:2:0:3::1")
	peerUPF  = netip.MustParseAddr("198.18.9.1")
	peerV6   = netip.MustParseAddr("2001:2:0:9::1")
)

func TestSourceIsThePathsLocalAddress(t *testing.T) {
	for _, c := range []struct {
		name  string
		addrs Addrs
		side  Side
		peer  netip.Addr
		want  netip.Addr // invalid: none
	}{
		{"toward a gNB: the N3 address", Addrs{Access: []netip.Addr{n3}, Core: []netip.Addr{n9}}, Access, gnb, n3},
		{"toward a peer UPF: the N9 address", Addrs{Access: []netip.Addr{n3}, Core: []netip.Addr{n9}}, Core, peerUPF, n9},
		{"toward the core without N9: the N3 address", Addrs{Access: []netip.Addr{n3}}, Core, peerUPF, n3},
		{"the peer's family: IPv6 on N3", Addrs{Access: []netip.Addr{n3, n3v6}, Core: []netip.Addr{n9}}, Access, gnbV6, n3v6},
		{"the peer's family: IPv6 on N9", Addrs{Access: []netip.Addr{n3, n3v6}, Core: []netip.Addr{n9, n9v6}}, Core, peerV6, n9v6},
		{"N9 without the peer's family: N3's", Addrs{Access: []netip.Addr{n3, n3v6}, Core: []netip.Addr{n9}}, Core, peerV6, n3v6},
		{"never N9 toward the access side", Addrs{Access: []netip.Addr{n3v6}, Core: []netip.Addr{n9}}, Access, gnb, netip.Addr{}},
		{"no address of the peer's family", Addrs{Access: []netip.Addr{n3}}, Access, gnbV6, netip.Addr{}},
		{"no peer", Addrs{Access: []netip.Addr{n3}}, Access, netip.Addr{}, netip.Addr{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := c.addrs.Source(c.side, c.peer)
			if got != c.want || ok != c.want.IsValid() {
				t.Errorf("Source(%v, %v) = %v, %v; want %v", c.side, c.peer, got, ok, c.want)
			}
		})
	}
}

func TestParseTakesEchoResponsesAndErrorIndications(t *testing.T) {
	errInd := errorIndication(7, 0x1234, gnb)
	errInd6 := errorIndication(7, 0x1234, gnbV6)
	// An Error Indication with a UDP Port extension header (§5.2.2.1).
	withExt := []byte{0x36, 26, 0, 20, 0, 0, 0, 0, 0, 1, 0, 0x40, 1, 0x08, 0x68, 0, 16, 0, 0, 0x12, 0x34, 133, 0, 4, 198, 18, 3, 1}
	for _, c := range []struct {
		name string
		b    []byte
		want Received
		ok   bool
	}{
		{"echo response", []byte{0x32, 2, 0, 6, 0, 0, 0, 0, 0, 1, 0, 0, 14, 0}, Received{Seq: 1}, true},
		{"echo response without its sequence number", []byte{0x30, 2, 0, 2, 0, 0, 0, 0, 14, 0}, Received{}, false},
		{"error indication, IPv4", errInd, Received{ErrorIndication: true, TEID: 0x1234, Peer: gnb}, true},
		{"error indication, IPv6", errInd6, Received{ErrorIndication: true, TEID: 0x1234, Peer: gnbV6}, true},
		{"error indication after an extension header", withExt, Received{ErrorIndication: true, TEID: 0x1234, Peer: gnb}, true},
		{"padding after the message is ignored", append(bytes.Clone(errInd), 0, 0, 0), Received{ErrorIndication: true, TEID: 0x1234, Peer: gnb}, true},
		{"error indication without the peer address", fixLength(errInd[:17]), Received{}, false},
		{"error indication without the sequence number field", []byte{0x30, 26, 0, 0, 0, 0, 0, 0}, Received{}, false},
		{"an IE cut short", fixLength(errInd[:len(errInd)-1]), Received{}, false},
		{"echo request: the datapath's", echoRequest(1), Received{}, false},
		{"end marker", endMarker(5), Received{}, false},
		{"G-PDU", []byte{0x30, 255, 0, 1, 0, 0, 0, 1, 0x45}, Received{}, false},
		{"GTPv2", []byte{0x48, 2, 0, 4, 0, 0, 0, 0}, Received{}, false},
		{"shorter than a header", []byte{0x32, 2, 0}, Received{}, false},
		{"length past the datagram", []byte{0x32, 2, 0, 9, 0, 0, 0, 0}, Received{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := parse(c.b)
			if ok != c.ok || (ok && got != c.want) {
				t.Errorf("parse(% x) = %+v, %v; want %+v, %v", c.b, got, ok, c.want, c.ok)
			}
		})
	}
}

// fixLength makes the header's length that of b.
func fixLength(b []byte) []byte {
	b = bytes.Clone(b)
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)-8))
	return b
}

// The bytes as tshark 4 reads them: "Supported extension header
// notification", sequence number 7, one type in the list: PDU Session
// container (0x85).
func TestSupportedExtensionHeadersNamesThePDUSessionContainer(t *testing.T) {
	want := []byte{0x32, 31, 0, 7, 0, 0, 0, 0, 0, 7, 0, 0, 141, 1, 0x85}
	if got := supportedExtHeaders(7); !bytes.Equal(got, want) {
		t.Errorf("got % x\nwant % x", got, want)
	}
}

func TestOpenRefusesNoAddress(t *testing.T) {
	if e, err := Open(Addrs{}); err == nil {
		e.Close()
		t.Fatal("Open with no address: want an error")
	}
}

// world is a UPF namespace with N3 (198.18.3.2) toward a gNB namespace
// (198.18.3.1) and N9 (198.18.9.2) toward a peer UPF's (198.18.9.1).
type world struct{ upf, gnb, peer string }

func newWorld(t *testing.T) world {
	w := world{upf: testenv.Namespace(t, "sluice-gtpuupf"), gnb: testenv.Namespace(t, "sluice-gtpugnb"), peer: testenv.Namespace(t, "sluice-gtpupeer")}
	for _, l := range []struct{ dev, local, remoteNS, remoteDev, remote string }{
		{"n3", "198.18.3.2/24", w.gnb, "gnb0", "198.18.3.1/24"},
		{"n9", "198.18.9.2/24", w.peer, "upf0", "198.18.9.1/24"},
	} {
		testenv.Sh(t, "ip", "-n", w.upf, "link", "add", l.dev, "type", "veth", "peer", "name", l.remoteDev, "netns", l.remoteNS)
		testenv.Sh(t, "ip", "-n", w.upf, "addr", "add", l.local, "dev", l.dev)
		testenv.Sh(t, "ip", "-n", l.remoteNS, "addr", "add", l.remote, "dev", l.remoteDev)
		testenv.Sh(t, "ip", "-n", w.upf, "link", "set", l.dev, "up")
		testenv.Sh(t, "ip", "-n", l.remoteNS, "link", "set", l.remoteDev, "up")
	}
	return w
}

// openIn opens the endpoints inside ns: the sockets stay there.
func openIn(t *testing.T, ns string, addrs Addrs) *Endpoints {
	t.Helper()
	var e *Endpoints
	err := netns.Do(ns, func() (err error) { e, err = Open(addrs); return err })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestPrivilegedMessagesLeaveFromTheirPathsAddress(t *testing.T) {
	w := newWorld(t)
	e := openIn(t, w.upf, Addrs{Access: []netip.Addr{n3}, Core: []netip.Addr{n9}})
	atGNB := testenv.ListenUDP(t, w.gnb, "198.18.3.1:2152")
	atPeer := testenv.ListenUDP(t, w.peer, "198.18.9.1:2152")
	for _, c := range []struct {
		name     string
		send     func() error
		at       *net.UDPConn
		from     netip.Addr
		msgType  byte
		peerAddr netip.Addr // the GTP-U Peer Address IE, for an Error Indication
	}{
		{"echo to the gNB from N3", func() error { return e.Echo(Access, gnb) }, atGNB, n3, typeEchoRequest, netip.Addr{}},
		{"echo to the peer UPF from N9", func() error { return e.Echo(Core, peerUPF) }, atPeer, n9, typeEchoRequest, netip.Addr{}},
		{"end marker to the gNB from N3", func() error { return e.EndMarker(Access, gnb, 0x200) }, atGNB, n3, typeEndMarker, netip.Addr{}},
		{"end marker to the peer UPF from N9", func() error { return e.EndMarker(Core, peerUPF, 0x900) }, atPeer, n9, typeEndMarker, netip.Addr{}},
		{"error indication to the gNB from and naming N3", func() error { return e.ErrorIndication(Access, gnb, 0xdead) }, atGNB, n3, typeErrorIndication, n3},
		{"error indication to the peer UPF from and naming N9", func() error { return e.ErrorIndication(Core, peerUPF, 0xdead) }, atPeer, n9, typeErrorIndication, n9},
		{"supported extension headers to the gNB from N3", func() error { return e.SupportedExtensionHeaders(Access, gnb) }, atGNB, n3, typeSupportedExtHdr, netip.Addr{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.send(); err != nil {
				t.Fatal(err)
			}
			b, from := readOne(t, c.at)
			if from != netip.AddrPortFrom(c.from, Port) || len(b) < 8 || b[1] != c.msgType {
				t.Fatalf("got % x from %v; want type %d from %v", b, from, c.msgType, netip.AddrPortFrom(c.from, Port))
			}
			if c.peerAddr.IsValid() {
				if !bytes.HasSuffix(b, c.peerAddr.AsSlice()) {
					t.Errorf("error indication % x does not name %v", b, c.peerAddr)
				}
			}
		})
	}
	if err := e.Echo(Access, peerV6); !errors.Is(err, ErrNoSource) {
		t.Errorf("echo to an IPv6 peer with only IPv4 addresses: %v, want ErrNoSource", err)
	}
}

func TestPrivilegedAnswersComeWithTheAddressTheyCameTo(t *testing.T) {
	w := newWorld(t)
	e := openIn(t, w.upf, Addrs{Access: []netip.Addr{n3}, Core: []netip.Addr{n9}})
	atPeer := testenv.ListenUDP(t, w.peer, "198.18.9.1:2152")
	if err := e.Echo(Core, peerUPF); err != nil {
		t.Fatal(err)
	}
	req, from := readOne(t, atPeer)
	echoResponse := func(seq []byte) []byte {
		return []byte{0x32, typeEchoResponse, 0, 6, 0, 0, 0, 0, seq[0], seq[1], 0, 0, 14, 0} // Recovery, as TS 29.281 §7.2.2 keeps it
	}
	// An Echo Response no request of ours asked for, then the one that
	// answers ours, then it again: only the answer comes through.
	for _, seq := range [][]byte{{req[8], req[9] + 1}, req[8:10], req[8:10]} {
		if _, err := atPeer.WriteToUDPAddrPort(echoResponse(seq), from); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case r := <-e.Received():
		if want := (Received{From: peerUPF, Local: n9, Seq: uint16(req[8])<<8 | uint16(req[9])}); r != want {
			t.Errorf("received %+v, want %+v", r, want)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the echo response did not come")
	}
	select {
	case r := <-e.Received():
		t.Errorf("received %+v: an unsolicited Echo Response came through", r)
	case <-time.After(200 * time.Millisecond):
	}
}

func readOne(t *testing.T, c *net.UDPConn) ([]byte, netip.AddrPort) {
	t.Helper()
	buf := make([]byte, 2048)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("nothing came: %v", err)
	}
	return buf[:n], netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
}
