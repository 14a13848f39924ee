package datapath

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
)

// e2eNet is gnb <-> upf <-> dn, each a namespace, joined by veth pairs.
// The UPF side holds the same addresses as the fixtures' namespace.
type e2eNet struct{ gnb, upf, dn string }

func newE2ENet(t *testing.T) e2eNet {
	n := e2eNet{gnb: testenv.Namespace(t, "sluice-gnb"), upf: testenv.Namespace(t, "sluice-upf"), dn: testenv.Namespace(t, "sluice-dn")}
	in := func(ns string, args ...string) { testenv.Sh(t, append([]string{"ip", "-n", ns}, args...)...) }
	in(n.upf, "link", "add", "n3", "address", macN3.String(), "type", "veth", "peer", "name", "gnb0", "netns", n.gnb)
	in(n.upf, "link", "add", "n6", "address", macN6.String(), "type", "veth", "peer", "name", "dn0", "netns", n.dn)
	in(n.gnb, "link", "set", "gnb0", "address", macGNB.String())
	in(n.dn, "link", "set", "dn0", "address", macRouter.String())
	in(n.upf, "addr", "add", "198.18.3.2/24", "dev", "n3")
	in(n.upf, "addr", "add", "198.18.6.2/24", "dev", "n6")
	in(n.gnb, "addr", "add", "198.18.3.1/24", "dev", "gnb0")
	in(n.dn, "addr", "add", "198.18.6.1/24", "dev", "dn0")
	in(n.dn, "addr", "add", "198.18.7.10/32", "dev", "lo")
	for _, l := range [][2]string{{n.upf, "n3"}, {n.upf, "n6"}, {n.gnb, "gnb0"}, {n.dn, "dn0"}, {n.dn, "lo"}} {
		in(l[0], "link", "set", l[1], "up")
	}
	// The lab's static neighbours: the datapath does not resolve them itself.
	in(n.upf, "neigh", "replace", "198.18.3.1", "lladdr", macGNB.String(), "dev", "n3", "nud", "permanent")
	in(n.upf, "neigh", "replace", "198.18.6.1", "lladdr", macRouter.String(), "dev", "n6", "nud", "permanent")
	in(n.upf, "route", "add", "198.18.7.0/24", "via", "198.18.6.1")
	in(n.dn, "route", "add", "10.45.0.0/16", "via", "198.18.6.2")
	return n
}

// attachPass gives a veth's far end NAPI, without which frames redirected
// into the pair are dropped.
func attachPass(t *testing.T, ns, dev string) {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.XDP,
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, int32(Passed)), asm.Return()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	err = netns.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		l, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifc.Index})
		if err == nil {
			t.Cleanup(func() { l.Close() })
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func listenUDP(t *testing.T, ns, addr string) *net.UDPConn {
	var c *net.UDPConn
	err := netns.Do(ns, func() (err error) {
		c, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Room for every datagram of an exchange, should the reader be late.
	raw, err := c.SyscallConn()
	if err == nil {
		raw.Control(func(fd uintptr) {
			err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20)
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// receive reads datagrams until n arrived or the line is quiet for a second.
func receive(c *net.UDPConn, n int) [][]byte {
	var got [][]byte
	buf := make([]byte, 2048)
	for len(got) < n {
		c.SetReadDeadline(time.Now().Add(time.Second))
		k, _, err := c.ReadFromUDP(buf)
		if err != nil {
			break
		}
		got = append(got, append([]byte(nil), buf[:k]...))
	}
	return got
}

func TestPrivilegedEndToEnd(t *testing.T) {
	for _, mode := range []XDPMode{Native, Generic} {
		t.Run(string(mode), func(t *testing.T) {
			n := newE2ENet(t)
			d := loadIn(t, n.upf, Options{Interfaces: []Interface{{"n3", N3}, {"n6", N6}}, GTPUAddrs: []netip.Addr{addrN3}})
			if err := netns.Do(n.upf, func() error { return d.Attach(mode) }); err != nil {
				t.Fatal(err)
			}
			if err := d.Apply(baseSession()); err != nil {
				t.Fatal(err)
			}
			p := n.peers(t)
			p.exchange(t, 0, 2000)
			checkUsage(t, d, 2000)
			s, _ := d.Stats()
			if s.Verdicts[Redirected] != 2*2000 {
				t.Errorf("redirected %d, want %d; drops %v", s.Verdicts[Redirected], 2*2000, s.Drops)
			}
			p.echo(t)
		})
	}
}

// With pinning, the datapath forwards while no process holds it, and the
// next Load takes the sessions and counters back.
func TestPrivilegedPinnedRestart(t *testing.T) {
	n := newE2ENet(t)
	pin := fmt.Sprintf("/sys/fs/bpf/sluice-test-%d", os.Getpid())
	t.Cleanup(func() { os.RemoveAll(pin) })
	opts := Options{Interfaces: []Interface{{"n3", N3}, {"n6", N6}}, GTPUAddrs: []netip.Addr{addrN3}, PinPath: pin}
	load := func() *Datapath {
		var d *Datapath
		err := netns.Do(n.upf, func() (err error) {
			if d, err = Load(opts); err == nil {
				err = d.Attach(Native)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	p := n.peers(t)

	first := load()
	if err := first.Apply(baseSession()); err != nil {
		t.Fatal(err)
	}
	p.exchange(t, 0, 500)
	first.Close()
	p.exchange(t, 500, 500) // nobody holds the datapath: it still forwards

	second := load()
	p.exchange(t, 1000, 500)
	checkUsage(t, second, 1500)

	if err := second.Unpin(); err != nil {
		t.Fatal(err)
	}
	second.Close()
	out, _ := exec.Command("ip", "-n", n.upf, "link", "show", "n3").CombinedOutput()
	if strings.Contains(string(out), "xdp") {
		t.Errorf("a program is still attached after Unpin:\n%s", out)
	}
}

func checkUsage(t *testing.T, d *Datapath, count uint64) {
	t.Helper()
	u, err := d.Usage(1)
	if err != nil {
		t.Fatal(err)
	}
	pdu := uint64(20 + 8 + e2ePayload) // the inner IPv4 packet, as URRs count it
	if want := (Usage{Uplink: Traffic{count, count * pdu}, Downlink: Traffic{count, count * pdu}}); u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
}

const e2ePayload = 100

// e2ePeers are the gNB's and the DN's sockets.
type e2ePeers struct{ gnb, dnRx, dnTx *net.UDPConn }

func (n e2eNet) peers(t *testing.T) e2ePeers {
	attachPass(t, n.gnb, "gnb0")
	attachPass(t, n.dn, "dn0")
	return e2ePeers{
		gnb:  listenUDP(t, n.gnb, "198.18.3.1:2152"),
		dnRx: listenUDP(t, n.dn, "198.18.7.10:5001"),
		dnTx: listenUDP(t, n.dn, "198.18.7.10:5002"),
	}
}

// exchange sends count numbered datagrams each way, starting at first, and
// checks that each arrives once, in order and intact.
func (p e2ePeers) exchange(t *testing.T, first, count int) {
	t.Helper()
	upf := &net.UDPAddr{IP: addrN3.AsSlice(), Port: 2152}
	ue := &net.UDPAddr{IP: addrUE.AsSlice(), Port: 40000}

	upc := receiveAsync(p.dnRx, count)
	for i := first; i < first+count; i++ {
		f := upFlow
		f.payload = e2ePayload
		b := serialize(append([]gopacket.SerializableLayer{tunnel{teid: teidUL, qfi: 9, pduType: 1}.gtp()}, numbered(f, i)...)...)
		if _, err := p.gnb.WriteToUDP(b, upf); err != nil {
			t.Fatal(err)
		}
		pace(i)
	}
	up := <-upc
	downc := receiveAsync(p.gnb, count)
	for i := first; i < first+count; i++ {
		msg := make([]byte, e2ePayload)
		binary.BigEndian.PutUint32(msg, uint32(i))
		if _, err := p.dnTx.WriteToUDP(msg, ue); err != nil {
			t.Fatal(err)
		}
		pace(i)
	}
	down := <-downc

	if len(up) != count {
		t.Errorf("uplink: %d of %d datagrams reached the DN", len(up), count)
	}
	for i, b := range up {
		if len(b) != e2ePayload || binary.BigEndian.Uint32(b) != uint32(first+i) {
			t.Fatalf("uplink datagram %d: %d bytes, number %d", first+i, len(b), binary.BigEndian.Uint32(b))
		}
	}
	if len(down) != count {
		t.Errorf("downlink: %d of %d G-PDUs reached the gNB", len(down), count)
	}
	for i, b := range down {
		checkDownlinkGPDU(t, first+i, b, e2ePayload)
	}
}

// echo: a GTP-U Echo Request across the real path is answered.
func (p e2ePeers) echo(t *testing.T) {
	t.Helper()
	echo := []byte{0x32, 1, 0, 4, 0, 0, 0, 0, 0x12, 0x34, 0, 0}
	if _, err := p.gnb.WriteToUDP(echo, &net.UDPAddr{IP: addrN3.AsSlice(), Port: 2152}); err != nil {
		t.Fatal(err)
	}
	if r := receive(p.gnb, 1); len(r) != 1 || len(r[0]) != 14 || r[0][1] != 2 || r[0][8] != 0x12 || r[0][12] != 14 {
		t.Errorf("echo response %x", r)
	}
}

// receiveAsync receives while the sender sends, so no socket buffer overflows.
func receiveAsync(c *net.UDPConn, n int) <-chan [][]byte {
	ch := make(chan [][]byte, 1)
	go func() { ch <- receive(c, n) }()
	return ch
}

// numbered is f's layers with its payload starting with the number i.
func numbered(f flow, i int) []gopacket.SerializableLayer {
	ls := f.layers()
	p := ls[len(ls)-1].(gopacket.Payload)
	binary.BigEndian.PutUint32(p, uint32(i))
	return ls
}

func checkDownlinkGPDU(t *testing.T, i int, b []byte, payload int) {
	t.Helper()
	pkt := gopacket.NewPacket(b, layers.LayerTypeGTPv1U, gopacket.Default)
	g, _ := pkt.Layer(layers.LayerTypeGTPv1U).(*layers.GTPv1U)
	udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
	ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	switch {
	case g == nil || udp == nil || ip == nil:
		t.Fatalf("downlink G-PDU %d does not decode: %v", i, pkt.ErrorLayer())
	case g.TEID != teidDL || len(g.GTPExtensionHeaders) != 1 || g.GTPExtensionHeaders[0].Content[1] != qfiDef:
		t.Fatalf("downlink G-PDU %d: TEID %#x, extensions %+v", i, g.TEID, g.GTPExtensionHeaders)
	case ip.TTL != 63 || !ip.DstIP.Equal(addrUE.AsSlice()):
		t.Fatalf("downlink G-PDU %d: inner TTL %d to %v", i, ip.TTL, ip.DstIP)
	case len(udp.Payload) != payload || binary.BigEndian.Uint32(udp.Payload) != uint32(i):
		t.Fatalf("downlink G-PDU %d: payload of %d bytes numbered %d", i, len(udp.Payload), binary.BigEndian.Uint32(udp.Payload))
	}
}

// pace keeps a burst within the veth ring: the test is about counts, not speed.
func pace(i int) {
	if i%64 == 63 {
		time.Sleep(time.Millisecond)
	}
}
