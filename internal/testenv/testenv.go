// Package testenv builds the network namespaces that privileged tests run
// in, and removes them when the test ends. Only tests import it.
package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
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

// Namespace makes a namespace called prefix-<pid>-<n>, deleted at cleanup.
func Namespace(t testing.TB, prefix string) string {
	t.Helper()
	RequirePrivileges(t)
	ns := fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1))
	Sh(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	return ns
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
