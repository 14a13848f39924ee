package datapath

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"sync/atomic"

	"github.com/cilium/ebpf"
	"github.com/sluice-upf/sluice/internal/netns"
)

// The fixtures' world: one namespace holding the UPF's N3, N6 and N9
// devices (each a veth whose peer stays in the same namespace), with static
// neighbours of known MACs so that every output byte is predictable.
var (
	macN3     = mustMAC("02:00:00:00:03:02")
	macGNB    = mustMAC("02:00:00:00:03:01")
	macGNB2   = mustMAC("02:00:00:00:03:0b")
	macN6     = mustMAC("02:00:00:00:06:02")
	macRouter = mustMAC("02:00:00:00:06:01")
	macN9     = mustMAC("02:00:00:00:09:02")
	macPeer   = mustMAC("02:00:00:00:09:01")

	addrN3    = netip.MustParseAddr("198.18.3.2")
	addrN3v6  = netip.MustParseAddr("2001:2:0:3::2")
	addrN9    = netip.MustParseAddr("198.18.9.2")
	addrN6    = netip.MustParseAddr("198.18.6.2")
	addrGNB   = netip.MustParseAddr("198.18.3.1")
	addrGNB2  = netip.MustParseAddr("198.18.3.11")
	addrGNBv6 = netip.MustParseAddr("2001:2:0:3::1")
	addrPeer  = netip.MustParseAddr("198.18.9.1")
	addrNoARP = netip.MustParseAddr("198.18.3.99") // on link, never resolved
	addrDN    = netip.MustParseAddr("198.18.7.10") // behind the router
	addrDNv6  = netip.MustParseAddr("2001:2:0:7::10")
	addrUE    = netip.MustParseAddr("10.45.0.2")
	prefixUE6 = netip.MustParsePrefix("2001:2:0:45::/64")
	addrUE6   = netip.MustParseAddr("2001:2:0:45::2")
)

// Endpoint IDs: the index in Options.GTPUAddrs.
const (
	epN3   = 0
	epN3v6 = 1
	epN9   = 2
)

var nsSeq atomic.Int64

func mustMAC(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

func requirePrivileges(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for BPF and network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2")
	}
}

func sh(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// testNet makes the namespace and removes it when the test ends.
func testNet(t testing.TB) string {
	t.Helper()
	requirePrivileges(t)
	ns := fmt.Sprintf("sluice-dp-%d-%d", os.Getpid(), nsSeq.Add(1))
	sh(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	in := func(args ...string) { sh(t, append([]string{"ip", "-n", ns}, args...)...) }

	for _, l := range []struct {
		name string
		mac  net.HardwareAddr
		v4   string
		v6   string
	}{
		{"n3", macN3, "198.18.3.2/24", "2001:2:0:3::2/64"},
		{"n6", macN6, "198.18.6.2/24", "2001:2:0:6::2/64"},
		{"n9", macN9, "198.18.9.2/24", ""},
	} {
		in("link", "add", l.name, "address", l.mac.String(), "type", "veth", "peer", "name", l.name+"p")
		in("addr", "add", l.v4, "dev", l.name)
		if l.v6 != "" {
			in("addr", "add", l.v6, "dev", l.name, "nodad")
		}
		in("link", "set", l.name+"p", "up")
		in("link", "set", l.name, "up")
	}
	for _, n := range []struct {
		addr, mac, dev string
	}{
		{"198.18.3.1", macGNB.String(), "n3"},
		{"198.18.3.11", macGNB2.String(), "n3"},
		{"2001:2:0:3::1", macGNB.String(), "n3"},
		{"198.18.6.1", macRouter.String(), "n6"},
		{"2001:2:0:6::1", macRouter.String(), "n6"},
		{"198.18.9.1", macPeer.String(), "n9"},
	} {
		in("neigh", "replace", n.addr, "lladdr", n.mac, "dev", n.dev, "nud", "permanent")
	}
	in("route", "add", "198.18.7.0/24", "via", "198.18.6.1", "dev", "n6")
	in("route", "add", "2001:2:0:7::/64", "via", "2001:2:0:6::1", "dev", "n6")
	sh(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.all.forwarding=1", "net.ipv6.conf.all.forwarding=1")
	return ns
}

// loadIn loads a fresh datapath inside ns, closed when the test ends.
func loadIn(t testing.TB, ns string, opts Options) *Datapath {
	t.Helper()
	if opts.Interfaces == nil {
		opts.Interfaces = []Interface{{"n3", N3}, {"n6", N6}, {"n9", N9}}
	}
	if opts.GTPUAddrs == nil {
		opts.GTPUAddrs = []netip.Addr{addrN3, addrN3v6, addrN9}
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = 1024
	}
	var d *Datapath
	err := netns.Do(ns, func() (err error) {
		d, err = Load(opts)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// xdpMD mirrors struct xdp_md for BPF_PROG_RUN's context.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// runXDP runs role's program once on frame as if it arrived on dev.
func runXDP(t testing.TB, d *Datapath, ns string, role Role, frame []byte) (Verdict, []byte) {
	t.Helper()
	out := make([]byte, len(frame)+256)
	var ret uint32
	err := netns.Do(ns, func() error {
		opts := &ebpf.RunOptions{
			Data:    frame,
			DataOut: out,
			Context: xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(d.ifaces[role].Index)},
		}
		var err error
		ret, err = d.Program(role).Run(opts)
		out = opts.DataOut
		return err
	})
	if err != nil {
		t.Fatalf("prog.Run: %v", err)
	}
	return Verdict(ret), out
}

func netInterface(name string) (int, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return 0, err
	}
	return ifc.Index, nil
}
