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

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
)

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
			n := testenv.NewLab(t)
			d := loadIn(t, n.UPF, Options{Interfaces: []Interface{{Name: "n3", Role: N3}, {Name: "n6", Role: N6}}, GTPUAddrs: []netip.Addr{addrN3}})
			if err := netns.Do(n.UPF, func() error { return d.Attach(mode) }); err != nil {
				t.Fatal(err)
			}
			if err := d.Apply(baseSession()); err != nil {
				t.Fatal(err)
			}
			p := peers(t, n)
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
	n := testenv.NewLab(t)
	pin := fmt.Sprintf("/sys/fs/bpf/sluice-test-%d", os.Getpid())
	t.Cleanup(func() { os.RemoveAll(pin) })
	opts := Options{Interfaces: []Interface{{Name: "n3", Role: N3}, {Name: "n6", Role: N6}}, GTPUAddrs: []netip.Addr{addrN3}, PinPath: pin}
	load := func() *Datapath {
		var d *Datapath
		err := netns.Do(n.UPF, func() (err error) {
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
	p := peers(t, n)

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
	out, _ := exec.Command("ip", "-n", n.UPF, "link", "show", "n3").CombinedOutput()
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

func peers(t *testing.T, n testenv.Lab) e2ePeers {
	return e2ePeers{
		gnb:  testenv.ListenUDP(t, n.GNB, "198.18.3.1:2152"),
		dnRx: testenv.ListenUDP(t, n.DN, "198.18.7.10:5001"),
		dnTx: testenv.ListenUDP(t, n.DN, "198.18.7.10:5002"),
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

// An interface's configured MTU is set on its device when attaching.
func TestPrivilegedAttachSetsMTU(t *testing.T) {
	ns := testenv.UPF(t)
	d := loadIn(t, ns, Options{Interfaces: []Interface{{Name: "n3", Role: N3, MTU: 1400}, {Name: "n6", Role: N6}},
		GTPUAddrs: []netip.Addr{addrN3}})
	var mtu3, mtu6 int
	err := netns.Do(ns, func() error {
		if err := d.Attach(Native); err != nil {
			return err
		}
		n3, err := net.InterfaceByName("n3")
		if err != nil {
			return err
		}
		n6, err := net.InterfaceByName("n6")
		mtu3, mtu6 = n3.MTU, n6.MTU
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if mtu3 != 1400 || mtu6 != 1500 {
		t.Errorf("MTUs n3 %d, n6 %d; want 1400 (configured) and 1500 (left as it was)", mtu3, mtu6)
	}
}

// A device re-created while the datapath was pinned severs its pinned
// link: the next Attach drops that pin and attaches afresh.
func TestPrivilegedPinnedAttachAfterDeviceRecreated(t *testing.T) {
	ns := testenv.UPF(t)
	pin := fmt.Sprintf("/sys/fs/bpf/sluice-test-severed-%d", os.Getpid())
	t.Cleanup(func() { os.RemoveAll(pin) })
	opts := Options{Interfaces: []Interface{{Name: "n3", Role: N3}, {Name: "n6", Role: N6}}, GTPUAddrs: []netip.Addr{addrN3}, PinPath: pin}
	attach := func() error {
		return netns.Do(ns, func() error {
			d, err := Load(opts)
			if err != nil {
				return err
			}
			defer d.Close()
			return d.Attach(Native)
		})
	}
	if err := attach(); err != nil {
		t.Fatal(err)
	}
	testenv.Sh(t, "ip", "-n", ns, "link", "del", "n6")
	testenv.Sh(t, "ip", "-n", ns, "link", "add", "n6", "type", "veth", "peer", "name", "n6p")
	testenv.Sh(t, "ip", "-n", ns, "link", "set", "n6", "up")
	if err := attach(); err != nil {
		t.Fatalf("attach after n6 was re-created: %v", err)
	}
	out, _ := exec.Command("ip", "-n", ns, "link", "show", "n6").CombinedOutput()
	if !strings.Contains(string(out), "xdp") {
		t.Errorf("no program on the re-created n6:\n%s", out)
	}
}
