package topo

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// testPrefix starts the names of the labs tests make: sluicetest-<pid>-<n>.
const testPrefix = "sluicetest-"

var labSeq atomic.Int64

// testLabName is a lab name no other test uses. Labs of test processes
// that died before their cleanup go first.
func testLabName(t *testing.T) string {
	t.Helper()
	testenv.RequirePrivileges(t)
	removeOrphans.Do(removeOrphanLabs)
	name := fmt.Sprintf("%s%d-%d", testPrefix, os.Getpid(), labSeq.Add(1))
	t.Cleanup(func() {
		if err := Down(name); err != nil {
			t.Errorf("tear down: %v", err)
		}
	})
	return name
}

var removeOrphans sync.Once

func removeOrphanLabs() {
	for _, ns := range testNamespaces("") {
		pid, err := strconv.Atoi(strings.Split(strings.TrimPrefix(ns, testPrefix), "-")[0])
		if err == nil && unix.Kill(pid, 0) == unix.ESRCH {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	}
}

// testNamespaces lists the namespaces of test labs whose names start
// with testPrefix+more.
func testNamespaces(more string) []string {
	out, _ := exec.Command("ip", "netns", "list").Output()
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], testPrefix+more) {
			names = append(names, f[0])
		}
	}
	return names
}

// up builds a lab for the test, torn down at cleanup even if Up fails.
func up(t *testing.T, o Options) Lab {
	t.Helper()
	o.Name = testLabName(t)
	l, err := Up(o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// rootNamespace is what the root namespace has that a lab could touch.
func rootNamespace(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, args := range [][]string{{"-br", "link"}, {"-br", "addr"}, {"route", "show", "table", "all"}, {"-6", "route", "show", "table", "all"}} {
		out, err := exec.Command("ip", args...).Output()
		if err != nil {
			t.Fatalf("ip %s: %v", strings.Join(args, " "), err)
		}
		b.Write(out)
	}
	return b.String()
}

// unchanged checks that the root namespace is as it was before.
func unchanged(t *testing.T, before, when string) {
	t.Helper()
	if now := rootNamespace(t); now != before {
		t.Errorf("the root namespace changed %s:\nbefore:\n%s\nnow:\n%s", when, before, now)
	}
}

func TestBuildCommandsStayInTheLab(t *testing.T) {
	l, err := Options{Name: "x", N9: true}.lab()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range l.buildCommands() {
		ns := ""
		switch {
		case c[0] == "-n":
			ns = c[1]
		case c[0] == "netns" && (c[1] == "add" || c[1] == "exec"):
			ns = c[2]
		}
		if !slices.Contains(l.all(), ns) {
			t.Errorf("ip %s: not inside one of the lab's namespaces", strings.Join(c, " "))
		}
		if i := slices.Index(c, "netns"); i > 0 && !slices.Contains(l.all(), c[i+1]) {
			t.Errorf("ip %s: moves a device out of the lab", strings.Join(c, " "))
		}
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		ok   bool
	}{
		{"defaults", Options{}, true},
		{"n9 and queues", Options{Name: "lab-2", N9: true, Queues: 4}, true},
		{"a slash would leave the namespace directory", Options{Name: "a/b"}, false},
		{"a name cannot start with a dash", Options{Name: "-x"}, false},
		{"too long a name", Options{Name: strings.Repeat("x", 33)}, false},
		{"no negative queues", Options{Queues: -1}, false},
		{"more queues than a veth uses", Options{Queues: MaxQueues + 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := tc.o.lab()
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if tc.ok && (l.Queues < 1 || l.Name == "" || (l.UPF2 != "") != tc.o.N9) {
				t.Errorf("lab %+v", l)
			}
		})
	}
}

func TestPrivilegedUpDownLeavesNothingBehind(t *testing.T) {
	testenv.RequirePrivileges(t)
	root := rootNamespace(t)
	l := up(t, Options{N9: true, Queues: 2})
	if got := testNamespaces(l.Name[len(testPrefix):] + "-"); len(got) != 5 {
		t.Errorf("namespaces %v, want smf, gnb, upf, dn, upf2", got)
	}
	unchanged(t, root, "with the lab up")
	// What lab/gnb leaves when its run is killed outright: the UE
	// namespace, with a veth into the gNB's.
	testenv.Sh(t, "ip", "netns", "add", l.UE)
	testenv.Sh(t, "ip", "-n", l.GNB, "link", "add", "gnbue", "type", "veth", "peer", "name", "ue0", "netns", l.UE)
	if err := Down(l.Name); err != nil {
		t.Fatal(err)
	}
	if got := testNamespaces(l.Name[len(testPrefix):] + "-"); got != nil {
		t.Errorf("namespaces left: %v", got)
	}
	unchanged(t, root, "after down")
	if err := Down(l.Name); err != nil {
		t.Errorf("down with nothing to remove: %v", err)
	}
	if _, err := Show(l.Name); !errors.Is(err, ErrNoLab) {
		t.Errorf("show after down: %v, want ErrNoLab", err)
	}
}

func TestPrivilegedUpIsIdempotent(t *testing.T) {
	l := up(t, Options{})
	// A mark a rebuild would remove.
	testenv.Sh(t, "ip", "-n", l.UPF, "addr", "add", "198.18.4.99/24", "dev", DevN4)
	if _, err := Up(Options{Name: l.Name}); err != nil {
		t.Fatal(err)
	}
	if !hasAddr(t, l.Name, l.UPF, DevN4, "198.18.4.99/24") {
		t.Error("Up rebuilt a complete lab")
	}
	// Other options are another lab: it is rebuilt as asked.
	if _, err := Up(Options{Name: l.Name, N9: true}); err != nil {
		t.Fatal(err)
	}
	if hasAddr(t, l.Name, l.UPF, DevN4, "198.18.4.99/24") || !exists(l.Name+"-upf2") {
		t.Error("Up with --n9 did not rebuild the lab with a second UPF")
	}
}

func hasAddr(t *testing.T, name, ns, dev, addr string) bool {
	t.Helper()
	devs, err := Show(name)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(devs, func(d Device) bool { return d.Namespace == ns && d.Name == dev })
	return i >= 0 && slices.Contains(devs[i].Addrs, netip.MustParsePrefix(addr))
}

func TestPrivilegedUpRepairsAPartialLab(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, l Lab)
	}{
		{"a namespace deleted", func(t *testing.T, l Lab) { testenv.Sh(t, "ip", "netns", "del", l.DN) }},
		{"a route deleted", func(t *testing.T, l Lab) {
			testenv.Sh(t, "ip", "-n", l.UPF, "route", "del", DNHosts.String())
		}},
		{"a link down", func(t *testing.T, l Lab) { testenv.Sh(t, "ip", "-n", l.GNB, "link", "set", DevN3, "down") }},
		{"a neighbour forgotten", func(t *testing.T, l Lab) {
			testenv.Sh(t, "ip", "-n", l.UPF, "neigh", "del", GNB2N3.String(), "dev", DevN3)
		}},
		{"forwarding off", func(t *testing.T, l Lab) {
			testenv.Sh(t, "ip", "netns", "exec", l.UPF, "sysctl", "-qw", "net.ipv4.conf.all.forwarding=0")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := up(t, Options{})
			tc.damage(t, l)
			if off, err := l.deviations(); err != nil || len(off) == 0 {
				t.Fatalf("the damage went unseen: %v %v", off, err)
			}
			if _, err := Up(Options{Name: l.Name}); err != nil {
				t.Fatal(err)
			}
			if off, err := l.deviations(); err != nil || len(off) > 0 {
				t.Errorf("after Up: %v %v", off, err)
			}
		})
	}
}

// A crash is the build stopping after some of its commands: Down removes
// what is there, and Up builds the lab from it.
func TestPrivilegedCrashHalfWay(t *testing.T) {
	name := testLabName(t)
	l, err := Options{Name: name, N9: true}.lab()
	if err != nil {
		t.Fatal(err)
	}
	cmds := l.buildCommands()
	for _, k := range []int{1, 5, len(cmds) / 2, len(cmds) - 1} {
		if err := IPAll(cmds[:k]); err != nil {
			t.Fatalf("first %d commands: %v", k, err)
		}
		if err := Down(name); err != nil {
			t.Fatalf("down after %d commands: %v", k, err)
		}
		if left := testNamespaces(name[len(testPrefix):] + "-"); left != nil {
			t.Fatalf("down after %d commands left %v", k, left)
		}
		if err := IPAll(cmds[:k]); err != nil {
			t.Fatal(err)
		}
		if _, err := Up(Options{Name: name, N9: true}); err != nil {
			t.Fatalf("up after %d commands: %v", k, err)
		}
		if err := Down(name); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPrivilegedLabAsPlanned(t *testing.T) {
	l := up(t, Options{N9: true})
	devs, err := Show(l.Name)
	if err != nil {
		t.Fatal(err)
	}
	type dev struct{ ns, name, mac, addrs, peer string }
	var got []dev
	for _, d := range devs {
		addrs := fmt.Sprint(d.Addrs)
		got = append(got, dev{strings.TrimPrefix(d.Namespace, l.Name), d.Name, d.MAC.String(), addrs, strings.TrimPrefix(d.Peer, l.Name)})
		if !d.Up || d.XDP != nil || d.Queues != 1 || d.GRO != (d.Name != "lo") {
			t.Errorf("%s/%s: up %v, XDP %v, %d queues, GRO %v; want up, none, 1, GRO on a veth", d.Namespace, d.Name, d.Up, d.XDP, d.Queues, d.GRO)
		}
	}
	want := []dev{
		{"-smf", "n4", "02:00:00:00:04:01", "[198.18.4.1/24]", "-upf/n4"},
		{"-gnb", "n3", "02:00:00:00:03:01", "[198.18.3.1/24 198.18.3.11/24 2001:2:0:3::1/64]", "-upf/n3"},
		{"-upf", "n4", "02:00:00:00:04:02", "[198.18.4.2/24]", "-smf/n4"},
		{"-upf", "n3", "02:00:00:00:03:02", "[198.18.3.2/24 2001:2:0:3::2/64]", "-gnb/n3"},
		{"-upf", "n6", "02:00:00:00:06:02", "[198.18.6.2/24 2001:2:0:6::2/64]", "-dn/n6"},
		{"-upf", "n9", "02:00:00:00:09:02", "[198.18.9.2/24]", "-upf2/n9"},
		{"-dn", "lo", "00:00:00:00:00:00", "[198.18.7.10/32 2001:2:0:7::10/128]", ""},
		{"-dn", "n6", "02:00:00:00:06:01", "[198.18.6.1/24 2001:2:0:6::1/64]", "-upf/n6"},
		{"-upf2", "n9", "02:00:00:00:09:01", "[198.18.9.1/24]", "-upf/n9"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("devices:\n%v\nwant:\n%v", got, want)
	}

	// Static neighbours: every side knows the MACs of the other.
	for _, n := range []struct{ ns, entry string }{
		{l.UPF, "198.18.3.1 dev n3 lladdr 02:00:00:00:03:01 PERMANENT"},
		{l.UPF, "198.18.3.11 dev n3 lladdr 02:00:00:00:03:01 PERMANENT"},
		{l.UPF, "2001:2:0:3::1 dev n3 lladdr 02:00:00:00:03:01 PERMANENT"},
		{l.UPF, "198.18.6.1 dev n6 lladdr 02:00:00:00:06:01 PERMANENT"},
		{l.UPF, "2001:2:0:6::1 dev n6 lladdr 02:00:00:00:06:01 PERMANENT"},
		{l.UPF, "198.18.4.1 dev n4 lladdr 02:00:00:00:04:01 PERMANENT"},
		{l.UPF, "198.18.9.1 dev n9 lladdr 02:00:00:00:09:01 PERMANENT"},
		{l.GNB, "198.18.3.2 dev n3 lladdr 02:00:00:00:03:02 PERMANENT"},
		{l.GNB, "2001:2:0:3::2 dev n3 lladdr 02:00:00:00:03:02 PERMANENT"},
		{l.DN, "198.18.6.2 dev n6 lladdr 02:00:00:00:06:02 PERMANENT"},
		{l.DN, "2001:2:0:6::2 dev n6 lladdr 02:00:00:00:06:02 PERMANENT"},
		{l.SMF, "198.18.4.2 dev n4 lladdr 02:00:00:00:04:02 PERMANENT"},
		{l.UPF2, "198.18.9.2 dev n9 lladdr 02:00:00:00:09:02 PERMANENT"},
	} {
		if got := ipLines(t, "-n", n.ns, "neigh", "show", "nud", "permanent"); !slices.Contains(got, n.entry) {
			t.Errorf("%s: no neighbour %q in %q", n.ns, n.entry, got)
		}
	}

	// Routes: the UPF reaches the DN hosts, the DN the UE pools; no default
	// route anywhere.
	for _, r := range []struct{ ns, route string }{
		{l.UPF, "198.18.7.0/24 via 198.18.6.1 dev n6"},
		{l.UPF, "2001:2:0:7::/64 via 2001:2:0:6::1 dev n6 metric 1024 pref medium"},
		{l.DN, "10.32.0.0/12 via 198.18.6.2 dev n6"},
		{l.DN, "2001:db8:30::/44 via 2001:2:0:6::2 dev n6 metric 1024 pref medium"},
	} {
		if got := routes(t, r.ns); !slices.Contains(got, r.route) {
			t.Errorf("%s: no route %q in %q", r.ns, r.route, got)
		}
	}
	for _, ns := range l.all() {
		if i := slices.IndexFunc(routes(t, ns), func(r string) bool { return strings.HasPrefix(r, "default") }); i >= 0 {
			t.Errorf("%s has a default route: %s", ns, routes(t, ns)[i])
		}
	}
}

// routes are the IPv4 and IPv6 routes of ns, as ip prints them.
func routes(t *testing.T, ns string) []string {
	return append(ipLines(t, "-n", ns, "-4", "route"), ipLines(t, "-n", ns, "-6", "route")...)
}

// ipLines are the lines ip prints, trimmed.
func ipLines(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := IP(args...)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	return lines
}

func TestPrivilegedConnectivity(t *testing.T) {
	l := up(t, Options{})
	for _, tc := range []struct {
		name     string
		from, to string // namespaces
		addr     string // where to send, an address of to
	}{
		{"SMF to UPF on N4", l.SMF, l.UPF, "198.18.4.2"},
		{"gNB to UPF on N3", l.GNB, l.UPF, "198.18.3.2"},
		{"gNB's second address answered on N3", l.UPF, l.GNB, "198.18.3.11"},
		{"gNB to UPF on N3, IPv6", l.GNB, l.UPF, "2001:2:0:3::2"},
		{"DN to UPF on N6", l.DN, l.UPF, "198.18.6.2"},
		{"DN to UPF on N6, IPv6", l.DN, l.UPF, "2001:2:0:6::2"},
		{"UPF to a DN host", l.UPF, l.DN, "198.18.7.10"},
		{"UPF to a DN host, IPv6", l.UPF, l.DN, "2001:2:0:7::10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := udpExchange(l, tc.from, tc.to, netip.MustParseAddr(tc.addr)); err != nil {
				t.Error(err)
			}
		})
	}
	// No way out: the gNB has no route to the DN, nor anywhere else.
	err := l.Do(l.GNB, func() error {
		c, err := net.Dial("udp", "198.18.7.10:9")
		if err == nil {
			c.Close()
		}
		return err
	})
	if !errors.Is(err, unix.ENETUNREACH) {
		t.Errorf("gNB to a DN host: %v, want network unreachable", err)
	}
}

// udpExchange sends a datagram from a socket in from to one bound to addr
// in to, and checks that it comes.
func udpExchange(l Lab, from, to string, addr netip.Addr) error {
	var rx *net.UDPConn
	err := l.Do(to, func() (err error) {
		rx, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
		return err
	})
	if err != nil {
		return err
	}
	defer rx.Close()
	err = l.Do(from, func() error {
		tx, err := net.DialUDP("udp", nil, rx.LocalAddr().(*net.UDPAddr))
		if err != nil {
			return err
		}
		defer tx.Close()
		_, err = tx.Write([]byte("sluice"))
		return err
	})
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	rx.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 16)
	n, err := rx.Read(buf)
	if err != nil || string(buf[:n]) != "sluice" {
		return fmt.Errorf("receive: %q, %v", buf[:n], err)
	}
	return nil
}

// A frame that XDP in the UPF's namespace redirects into a far end with
// no XDP program arrives there: topo up turns GRO on, which gives the
// veth the NAPI that XDP would. With GRO off, the same frames are lost.
func TestPrivilegedFarEndsTakeRedirectedFrames(t *testing.T) {
	l := up(t, Options{})
	redirectN3ToN6(t, l)
	const frames = 20
	for _, gro := range []string{"on", "off"} {
		testenv.Sh(t, "ip", "netns", "exec", l.DN, "ethtool", "-K", DevN6, "gro", gro)
		before := xdpXmit(t, l, l.UPF, DevN6)
		err := l.Do(l.GNB, func() error {
			c, err := net.Dial("udp", netip.AddrPortFrom(UPFN3, 9).String())
			if err != nil {
				return err
			}
			defer c.Close()
			for range frames {
				if _, err := c.Write([]byte("sluice")); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the softirq that carries them
		// The gNB's kernel may send a frame of its own meanwhile.
		got := xdpXmit(t, l, l.UPF, DevN6) - before
		if gro == "on" && got < frames || gro == "off" && got != 0 {
			t.Errorf("GRO %s on the DN's n6: %d of %d redirected frames arrived", gro, got, frames)
		}
	}
}

// redirectN3ToN6 puts an XDP program on the UPF's n3 that redirects
// every frame out of its n6, until the test ends.
func redirectN3ToN6(t *testing.T, l Lab) {
	t.Helper()
	var n6 *net.Interface
	err := l.Do(l.UPF, func() (err error) {
		n6, err = net.InterfaceByName(DevN6)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.AttachXDP(t, l.UPF, DevN3, &ebpf.ProgramSpec{Name: "test_redirect", Type: ebpf.XDP, License: "GPL",
		Instructions: asm.Instructions{
			asm.Mov.Imm(asm.R1, int32(n6.Index)), asm.Mov.Imm(asm.R2, 0), asm.FnRedirect.Call(), asm.Return(),
		}})
}

// xdpXmit is how many frames XDP has sent out of dev in ns into its peer,
// which took them: the veth's xdp_xmit counters, every queue's.
func xdpXmit(t *testing.T, l Lab, ns, dev string) int {
	t.Helper()
	out, err := l.Command(ns, "ethtool", "-S", dev).Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		name, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		if strings.HasPrefix(name, "tx_queue_") && strings.HasSuffix(name, "_xdp_xmit") {
			k, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("ethtool -S %s: %q", dev, line)
			}
			n += k
		}
	}
	return n
}

func TestPrivilegedDoAndCommandStayInTheLab(t *testing.T) {
	l := up(t, Options{})
	if err := l.Do("", func() error { t.Error("ran in the root namespace"); return nil }); err == nil {
		t.Error("Do with no namespace: no error")
	}
	if err := l.Command(l.UPF2, "true").Run(); err == nil {
		t.Error("Command in a second UPF the lab does not have: no error")
	}
	out, err := l.Command(l.DN, "ip", "-br", "addr", "show", "lo").Output()
	if err != nil || !strings.Contains(string(out), "198.18.7.10/32") {
		t.Errorf("ip in the DN: %q, %v", out, err)
	}
}

func TestPrivilegedShowSaysWhereXDPIs(t *testing.T) {
	l := up(t, Options{})
	c, err := l.AttachPass(l.GNB, DevN3)
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.AttachPass(l.GNB, DevN3)
	if err != nil {
		t.Fatalf("a second pass program where one is: %v", err)
	}
	xdpOf := func() map[string][]string {
		devs, err := Show(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string][]string{}
		for _, d := range devs {
			if d.XDP != nil {
				m[strings.TrimPrefix(d.Namespace, l.Name)+"/"+d.Name] = d.XDP
			}
		}
		return m
	}
	got := xdpOf()
	if len(got) != 1 || len(got["-gnb/n3"]) != 1 || !strings.HasPrefix(got["-gnb/n3"][0], "lab_pass#") || !strings.HasSuffix(got["-gnb/n3"][0], " native") {
		t.Errorf("XDP %v, want lab_pass on the gNB's n3 only, native", got)
	}
	again.Close()
	c.Close()
	if got := xdpOf(); len(got) != 0 {
		t.Errorf("XDP %v after close, want none", got)
	}
}
