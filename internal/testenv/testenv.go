// Package testenv builds the network namespaces that privileged tests run
// in, and removes them when the test ends. Only tests import it.
package testenv

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/netns"
)

// The UPF namespace's world: its N3, N6 and N9 devices (veths whose peers
// stay in the same namespace) and static neighbours with known MACs, so
// that every byte the datapath sends is predictable.
var (
	MACN3     = mustMAC("02:00:00:00:03:02")
	MACGNB    = mustMAC("02:00:00:00:03:01")
	MACGNB2   = mustMAC("02:00:00:00:03:0b")
	MACN6     = mustMAC("02:00:00:00:06:02")
	MACRouter = mustMAC("02:00:00:00:06:01")
	MACN9     = mustMAC("02:00:00:00:09:02")
	MACPeer   = mustMAC("02:00:00:00:09:01")
)

var seq atomic.Int64

func mustMAC(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

// RequirePrivileges skips a test that cannot run here.
func RequirePrivileges(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for BPF and network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2")
	}
}

// Sh runs a command and fails the test if it fails.
func Sh(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Namespace makes a namespace called prefix-<pid>-<n>, with loopback up,
// deleted at cleanup.
// Namespaces of test processes that died before their cleanup ran (a fuzz
// worker is killed when its time is up) go first.
func Namespace(t testing.TB, prefix string) string {
	t.Helper()
	RequirePrivileges(t)
	removeOrphans.Do(removeOrphanNamespaces)
	ns := fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1))
	Sh(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	Sh(t, "ip", "-n", ns, "link", "set", "lo", "up") // upfd's API and metrics listen on loopback
	return ns
}

var removeOrphans sync.Once

// removeOrphanNamespaces deletes the sluice-<role>-<pid>-<n> namespaces
// whose process is gone.
func removeOrphanNamespaces() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		name := fields[0]
		parts := strings.Split(name, "-")
		if len(parts) < 4 || parts[0] != "sluice" {
			continue
		}
		pid, err := strconv.Atoi(parts[len(parts)-2])
		if err != nil || unix.Kill(pid, 0) != unix.ESRCH {
			continue // not ours, or its process is alive
		}
		exec.Command("ip", "netns", "del", name).Run()
	}
}

// UPF makes the UPF namespace: n3 198.18.3.2 (gNBs 198.18.3.1 and .11 as
// neighbours, .99 on link but never resolved), n6 198.18.6.2 (router .1,
// DN 198.18.7.0/24 behind it), n9 198.18.9.2 (peer UPF .1), with IPv6
// beside (2001:2:0:3::/64, 2001:2:0:6::/64) and forwarding on.
func UPF(t testing.TB) string {
	t.Helper()
	ns := Namespace(t, "sluice-upf")
	in := func(args ...string) { Sh(t, append([]string{"ip", "-n", ns}, args...)...) }
	for _, l := range []struct {
		name string
		mac  net.HardwareAddr
		v4   string
		v6   string
	}{
		{"n3", MACN3, "198.18.3.2/24", "2001:2:0:3::2/64"},
		{"n6", MACN6, "198.18.6.2/24", "2001:2:0:6::2/64"},
		{"n9", MACN9, "198.18.9.2/24", ""},
	} {
		in("link", "add", l.name, "address", l.mac.String(), "type", "veth", "peer", "name", l.name+"p")
		in("addr", "add", l.v4, "dev", l.name)
		if l.v6 != "" {
			in("addr", "add", l.v6, "dev", l.name, "nodad")
		}
		in("link", "set", l.name+"p", "up")
		in("link", "set", l.name, "up")
	}
	for _, n := range []struct{ addr, mac, dev string }{
		{"198.18.3.1", MACGNB.String(), "n3"},
		{"198.18.3.11", MACGNB2.String(), "n3"},
		{"2001:2:0:3::1", MACGNB.String(), "n3"},
		{"198.18.6.1", MACRouter.String(), "n6"},
		{"2001:2:0:6::1", MACRouter.String(), "n6"},
		{"198.18.9.1", MACPeer.String(), "n9"},
	} {
		in("neigh", "replace", n.addr, "lladdr", n.mac, "dev", n.dev, "nud", "permanent")
	}
	in("route", "add", "198.18.7.0/24", "via", "198.18.6.1", "dev", "n6")
	in("route", "add", "2001:2:0:7::/64", "via", "2001:2:0:6::1", "dev", "n6")
	Sh(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.all.forwarding=1", "net.ipv6.conf.all.forwarding=1")
	return ns
}

// Lab is the four-namespace world around a UPF: an SMF on N4, a gNB on N3
// (two addresses, for handovers), and a data network on N6.
type Lab struct{ SMF, GNB, UPF, DN string }

// NewLab builds it:
//
//	smf  smf0 198.18.4.1 ---- n4 198.18.4.2  upf
//	gnb  gnb0 198.18.3.1, .11 ---- n3 198.18.3.2  upf
//	dn   dn0  198.18.6.1 ---- n6 198.18.6.2  upf; DN host 198.18.7.10 on lo
//
// The UPF has static neighbours for the gNB and the router, a route to the
// DN; the DN routes the UE pool 10.45.0.0/16 back to the UPF. The gNB's
// and DN's ends get an XDP program that passes everything: a veth drops
// frames redirected into it unless its peer has NAPI, and only flushes an
// XDP_TX batch (the UPF's Echo Responses) to a peer with an XDP program.
func NewLab(t testing.TB) Lab {
	t.Helper()
	l := Lab{SMF: Namespace(t, "sluice-smf"), GNB: Namespace(t, "sluice-gnb"), UPF: Namespace(t, "sluice-upf"), DN: Namespace(t, "sluice-dn")}
	in := func(ns string, args ...string) { Sh(t, append([]string{"ip", "-n", ns}, args...)...) }
	in(l.UPF, "link", "add", "n4", "type", "veth", "peer", "name", "smf0", "netns", l.SMF)
	in(l.UPF, "link", "add", "n3", "address", MACN3.String(), "type", "veth", "peer", "name", "gnb0", "netns", l.GNB)
	in(l.UPF, "link", "add", "n6", "address", MACN6.String(), "type", "veth", "peer", "name", "dn0", "netns", l.DN)
	in(l.GNB, "link", "set", "gnb0", "address", MACGNB.String())
	in(l.DN, "link", "set", "dn0", "address", MACRouter.String())
	for _, a := range []struct{ ns, addr, dev string }{
		{l.UPF, "198.18.4.2/24", "n4"}, {l.SMF, "198.18.4.1/24", "smf0"},
		{l.UPF, "198.18.3.2/24", "n3"}, {l.GNB, "198.18.3.1/24", "gnb0"}, {l.GNB, "198.18.3.11/24", "gnb0"},
		{l.UPF, "198.18.6.2/24", "n6"}, {l.DN, "198.18.6.1/24", "dn0"}, {l.DN, "198.18.7.10/32", "lo"},
	} {
		in(a.ns, "addr", "add", a.addr, "dev", a.dev)
	}
	for _, d := range [][2]string{{l.UPF, "n4"}, {l.UPF, "n3"}, {l.UPF, "n6"}, {l.SMF, "smf0"}, {l.GNB, "gnb0"}, {l.DN, "dn0"}, {l.DN, "lo"}} {
		in(d[0], "link", "set", d[1], "up")
	}
	in(l.UPF, "neigh", "replace", "198.18.3.1", "lladdr", MACGNB.String(), "dev", "n3", "nud", "permanent")
	in(l.UPF, "neigh", "replace", "198.18.3.11", "lladdr", MACGNB.String(), "dev", "n3", "nud", "permanent")
	in(l.UPF, "neigh", "replace", "198.18.6.1", "lladdr", MACRouter.String(), "dev", "n6", "nud", "permanent")
	in(l.UPF, "route", "add", "198.18.7.0/24", "via", "198.18.6.1")
	in(l.DN, "route", "add", "10.45.0.0/16", "via", "198.18.6.2")
	AttachPass(t, l.GNB, "gnb0")
	AttachPass(t, l.DN, "dn0")
	return l
}

// AttachPass puts an XDP program that passes every frame on dev in ns,
// for the rest of the test.
func AttachPass(t testing.TB, ns, dev string) {
	t.Helper()
	AttachXDP(t, ns, dev, &ebpf.ProgramSpec{
		Name:         "test_pass",
		Type:         ebpf.XDP,
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 2 /* XDP_PASS */), asm.Return()},
	})
}

// AttachXDP loads the XDP program spec and puts it on dev in ns, for the
// rest of the test.
func AttachXDP(t testing.TB, ns, dev string, spec *ebpf.ProgramSpec) {
	t.Helper()
	prog, err := ebpf.NewProgram(spec)
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
		t.Fatalf("attach XDP program %s to %s/%s: %v", spec.Name, ns, dev, err)
	}
}

// ListenUDP opens a UDP socket on addr inside ns, closed at cleanup, with
// room for thousands of datagrams should the reader be late.
func ListenUDP(t testing.TB, ns, addr string) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	err := netns.Do(ns, func() (err error) {
		c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
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
