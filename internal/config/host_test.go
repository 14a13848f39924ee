package config

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
)

// hostNamespace makes a namespace shaped as the lab's UPF namespace for
// CheckHost: devices n3 (198.18.3.2), n6 (198.18.6.2), n9 (198.18.9.2) and n4
// (198.18.4.2), veths whose peers stay inside, and loopback up.
func hostNamespace(t *testing.T) string {
	ns := testenv.Namespace(t, "sluice-cfg")
	in := func(args ...string) { testenv.Sh(t, append([]string{"ip", "-n", ns}, args...)...) }
	in("link", "set", "lo", "up")
	for _, dev := range []struct{ name, addr string }{{"n3", "198.18.3.2/24"}, {"n6", "198.18.6.2/24"}, {"n9", "198.18.9.2/24"}, {"n4", "198.18.4.2/24"}} {
		in("link", "add", dev.name, "type", "veth", "peer", "name", dev.name+"p")
		if dev.addr != "" {
			in("addr", "add", dev.addr, "dev", dev.name)
		}
		in("link", "set", dev.name, "up")
		in("link", "set", dev.name+"p", "up")
	}
	return ns
}

// sysctl sets name to value in ns until the test ends, then back to 1.
func sysctl(t *testing.T, ns, name, value string) {
	testenv.Sh(t, "ip", "netns", "exec", ns, "sysctl", "-qw", name+"="+value)
	t.Cleanup(func() { testenv.Sh(t, "ip", "netns", "exec", ns, "sysctl", "-qw", name+"=1") })
}

// hold keeps addr busy in ns until the test ends.
func hold(t *testing.T, ns, network, addr string) {
	t.Helper()
	var closer interface{ Close() error }
	err := netns.Do(ns, func() (err error) {
		if network == "udp" {
			var a *net.UDPAddr
			if a, err = net.ResolveUDPAddr("udp", addr); err == nil {
				closer, err = net.ListenUDP("udp", a)
			}
			return err
		}
		closer, err = net.Listen("tcp", addr)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
}

// TestPrivilegedCheckHost runs the host checks in a namespace of the
// lab's shape: the defaults pass, and each missing device, foreign
// address and busy port is named with where its key was set.
func TestPrivilegedCheckHost(t *testing.T) {
	ns := hostNamespace(t)
	file := writeFile(t, "interfaces:\n  - {name: n3, role: n3, address: 198.18.3.2}\n  - {name: eth6, role: n6}\n")
	const devices = "it has lo, n3p, n3, n6p, n6, n9p, n9, n4p and 1 more"
	for _, tc := range []struct {
		name      string
		args, env []string
		busy      [][2]string // network and address held during the check
		off       []string    // forwarding sysctls turned off during the check
		bpffs     bool        // needs the BPF file system at BPFFS
		want      string
	}{{
		name: "the lab's defaults",
	}, {
		name: "a device the file names is not here",
		args: []string{"--config", file},
		want: file + `:3: interfaces[1].name: no device "eth6" in this network namespace (` + devices + `); create it, or name one that is here`,
	}, {
		name: "a device a variable names is not here",
		env:  []string{"UPFD_INTERFACES=[{name: eth3, role: n3, address: 198.18.3.2}, {name: n6, role: n6}]"},
		want: `env UPFD_INTERFACES: interfaces[0].name: no device "eth3" in this network namespace (` + devices + `); create it, or name one that is here`,
	}, {
		name: "forwarding is off, which upfd turns on",
		off:  []string{"net.ipv4.conf.n6.forwarding", "net.ipv6.conf.n3.forwarding"},
	}, {
		name: "the PFCP port is in use",
		busy: [][2]string{{"udp", "0.0.0.0:8805"}},
		want: `pfcp.listen: 198.18.4.2:8805 is in use by another program (UDP); stop it (ss -ulpn 'sport = :8805' shows which), or choose another port (pfcp.listen is upfd's default; set it in the file, with UPFD_PFCP_LISTEN or with --pfcp.listen)`,
	}, {
		name: "the PFCP address is not here",
		args: []string{"--pfcp.listen=198.18.5.2:8805"},
		want: `flag --pfcp.listen: 198.18.5.2 is not an address of this host (in this network namespace); add it to a device, or choose one that ip -br addr shows`,
	}, {
		name: "the GTP-U port of N3 is in use",
		busy: [][2]string{{"udp", "198.18.3.2:2152"}},
		want: `interfaces[0].address: 198.18.3.2:2152 is in use by another program (UDP); stop it (ss -ulpn 'sport = :2152' shows which), or choose another port (interfaces is upfd's default; set it in the file, with UPFD_INTERFACES or with --interfaces)`,
	}, {
		name: "the N3 address is not here",
		args: []string{"--interfaces=[{name: n3, role: n3, address: 198.18.3.9}, {name: n6, role: n6}]"},
		want: `flag --interfaces: interfaces[0].address: 198.18.3.9 is not an address of this host (in this network namespace); add it to a device, or choose one that ip -br addr shows`,
	}, {
		name: "the N9 address is not here",
		env:  []string{"UPFD_INTERFACES=[{name: n3, role: n3, address: 198.18.3.2}, {name: n6, role: n6}, {name: n9, role: n9, address: 198.18.9.9}]"},
		want: `env UPFD_INTERFACES: interfaces[2].address: 198.18.9.9 is not an address of this host (in this network namespace); add it to a device, or choose one that ip -br addr shows`,
	}, {
		name: "the API's port is in use",
		busy: [][2]string{{"tcp", "127.0.0.1:8080"}},
		want: `api.listen: 127.0.0.1:8080 is in use by another program (TCP); stop it (ss -tlpn 'sport = :8080' shows which), or choose another port (api.listen is upfd's default; set it in the file, with UPFD_API_LISTEN or with --api.listen)`,
	}, {
		name: "the metrics' port is in use on every address",
		env:  []string{"UPFD_METRICS_LISTEN=198.18.4.2:9090"},
		busy: [][2]string{{"tcp", "[::]:9090"}},
		want: `env UPFD_METRICS_LISTEN: 198.18.4.2:9090 is in use by another program (TCP); stop it (ss -tlpn 'sport = :9090' shows which), or choose another port`,
	}, {
		name: "the metrics' address is not here",
		args: []string{"--metrics.listen=198.18.4.9:9090"},
		want: `flag --metrics.listen: 198.18.4.9 is not an address of this host (in this network namespace); add it to a device, or choose one that ip -br addr shows`,
	}, {
		name: "PFCP on the N6 address",
		args: []string{"--pfcp.listen=198.18.6.2:8805"},
		want: `flag --pfcp.listen: 198.18.6.2 is an address of "n6", the n6 device, where the datapath lets the data network reach none of upfd's sockets; use an address of another device`,
	}, {
		name: "the API on the N6 address",
		env:  []string{"UPFD_API_LISTEN=198.18.6.2:8080"},
		want: `env UPFD_API_LISTEN: 198.18.6.2 is an address of "n6", the n6 device, where the datapath lets the data network reach none of upfd's sockets; use an address of another device`,
	}, {
		name: "metrics on every address: the datapath keeps N6 from the port",
		args: []string{"--metrics.listen=0.0.0.0:9090"},
	}, {
		name:  "the state file of a pinned upfd is a directory",
		args:  []string{"--pin_path=/sys/fs/bpf/sluice-cfg-test", "--state_file=/tmp"},
		bpffs: true,
		want:  `flag --state_file: "/tmp" is a directory; name a file in it, e.g. /tmp/state.journal`,
	}, {
		name: "servers turned off are not checked",
		args: []string{"--api.listen=", "--metrics.listen="},
		busy: [][2]string{{"tcp", "127.0.0.1:8080"}, {"tcp", "127.0.0.1:9090"}},
	}, {
		name: "the first problem in the order of the sources",
		args: []string{"--metrics.listen=198.18.4.9:9090"},
		env:  []string{"UPFD_API_LISTEN=198.18.4.8:8080"},
		busy: [][2]string{{"udp", "198.18.4.2:8805"}},
		want: `env UPFD_API_LISTEN: 198.18.4.8 is not an address of this host (in this network namespace); add it to a device, or choose one that ip -br addr shows`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.bpffs && bpffsProblem(BPFFS) != "" {
				t.Skip(bpffsProblem(BPFFS))
			}
			c, _, err := Load(tc.args, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range tc.off {
				sysctl(t, ns, name, "0")
			}
			for _, b := range tc.busy {
				hold(t, ns, b[0], b[1])
			}
			err = netns.Do(ns, c.CheckHost)
			if got := errorText(err); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("the check lets go of what it binds", func(t *testing.T) {
		for range 2 {
			if err := netns.Do(ns, Default().CheckHost); err != nil {
				t.Fatal(err)
			}
		}
		hold(t, ns, "udp", "198.18.4.2:8805")
		hold(t, ns, "udp", "198.18.3.2:2152")
		hold(t, ns, "tcp", "127.0.0.1:8080")
		hold(t, ns, "tcp", "127.0.0.1:9090")
	})
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestStateFileProblem(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/file", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{dir + "/state.journal", ""},
		{dir + "/new/deeper/state.journal", ""},
		{dir, `"` + dir + `" is a directory; name a file in it, e.g. ` + dir + "/state.journal"},
		{dir + "/file/state.journal", `"` + dir + `/file/state.journal" cannot be made: ` + dir + "/file is a file, not a directory; choose another place"},
	} {
		if got := stateFileProblem(tc.file); got != tc.want {
			t.Errorf("%s: got  %s\nwant %s", tc.file, got, tc.want)
		}
	}
}

func TestBPFFSProblem(t *testing.T) {
	dir := t.TempDir()
	want := dir + " is not a BPF file system, so nothing can be pinned there; mount one (mount -t bpf bpf " + dir +
		"), or in a container mount the host's (-v " + dir + ":" + dir + ")"
	if got := bpffsProblem(dir); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	missing := dir + "/missing"
	if got := bpffsProblem(missing); !strings.HasPrefix(got, "cannot read "+missing+" (no such file or directory); mount") {
		t.Errorf("got %s", got)
	}
	if mounts, err := os.ReadFile("/proc/mounts"); err == nil && strings.Contains(string(mounts), " "+BPFFS+" bpf ") {
		if got := bpffsProblem(BPFFS); got != "" {
			t.Errorf("%s is mounted, yet: %s", BPFFS, got)
		}
	}
}

// TestPrivilegedForwardingReadOnly runs the host checks where /proc/sys
// is read-only, as in a container: forwarding that is off, and that upfd
// therefore cannot turn on, is refused; forwarding that is on passes.
func TestPrivilegedForwardingReadOnly(t *testing.T) {
	ns := hostNamespace(t)
	testenv.Sh(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.all.forwarding=1", "net.ipv6.conf.all.forwarding=1")
	run := func() string {
		// A mount namespace of its own, where /proc/sys is bound read-only;
		// the check runs in this test binary, by checkHostHelper.
		script := `mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && exec "$0" -test.run='^TestCheckHostHelper$'`
		cmd := exec.Command("nsenter", "--net=/run/netns/"+ns, "unshare", "--mount", "--propagation", "private", "sh", "-c", script, os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		got, _, _ := strings.Cut(string(out), "\n")
		return strings.TrimPrefix(got, "check: ")
	}
	if got := run(); got != "ok" {
		t.Errorf("forwarding on: got %s", got)
	}
	sysctl(t, ns, "net.ipv6.conf.n6.forwarding", "0")
	want := `interfaces[1].name: IPv6 forwarding is off on "n6", and upfd cannot turn it on (read-only file system); turn it on before upfd starts: ` +
		`sysctl -w net.ipv6.conf.all.forwarding=1, or in a container --sysctl net.ipv6.conf.all.forwarding=1 ` +
		`(interfaces is upfd's default; set it in the file, with UPFD_INTERFACES or with --interfaces)`
	if got := run(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// helperEnv makes TestCheckHostHelper run.
const helperEnv = "SLUICE_CONFIG_CHECK_HOST_HELPER"

// TestCheckHostHelper is TestPrivilegedForwardingReadOnly's check, run in
// the namespaces it makes: it prints the defaults' host problem, or ok.
func TestCheckHostHelper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("run by TestPrivilegedForwardingReadOnly")
	}
	err := Default().CheckHost()
	if err == nil {
		fmt.Println("check: ok")
		return
	}
	fmt.Println("check: " + err.Error())
}

// TestPrivilegedPeerNetworks pins down whom an empty pfcp.peers lets in:
// the networks of pfcp.listen's device, never the data network's.
func TestPrivilegedPeerNetworks(t *testing.T) {
	ns := hostNamespace(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string // IPv4 networks; IPv6 link-local ones are left out
	}{
		{"pfcp.listen's device", nil, []string{"198.18.4.0/24"}},
		{"every device but n6", []string{"--pfcp.listen=0.0.0.0:8805"}, []string{"127.0.0.0/8", "198.18.3.0/24", "198.18.9.0/24", "198.18.4.0/24"}},
		{"pfcp.peers as written", []string{"--pfcp.peers=198.18.40.0/24,198.18.4.1"}, []string{"198.18.40.0/24", "198.18.4.1/32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Load(tc.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []netip.Prefix
			err = netns.Do(ns, func() (err error) {
				got, err = c.PeerNetworks()
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var v4 []string
			for _, p := range got {
				if p.Addr().Is4() {
					v4 = append(v4, p.String())
				}
			}
			if !slices.Equal(v4, tc.want) {
				t.Errorf("got %v, want %v", v4, tc.want)
			}
		})
	}
	t.Run("no device holds the listen address", func(t *testing.T) {
		c, _, err := Load([]string{"--pfcp.listen=198.18.5.2:8805"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = netns.Do(ns, func() error { _, err := c.PeerNetworks(); return err })
		want := "pfcp.peers: empty, and no device holds pfcp.listen's address 198.18.5.2 to take the SMFs' networks from; list the SMFs in pfcp.peers"
		if errorText(err) != want {
			t.Errorf("got  %v\nwant %s", err, want)
		}
	})
}
