package gnb

// Real UEs through the real upfd: built from ./cmd/upfd, run in the UPF
// namespace of a lab of our own, driven by the lab's SMF emulator.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

// upfdConfig is upfd in the lab, with the lab's UE pools.
const upfdConfig = `node_id: 198.18.4.2
pfcp:
  listen: 198.18.4.2:8805
  peers: [198.18.4.1]
  heartbeat_interval: 0
interfaces:
  - {name: n3, role: n3, address: 198.18.3.2}
  - {name: n6, role: n6}
dnns:
  - {name: internet, pools: [10.32.0.0/12, "2001:db8:30::/44"]}
max_sessions: 16384
xdp_mode: native
gtpu:
  echo_interval: 0
`

var labSeq atomic.Int64

// testLab builds a lab named as the topo tests name theirs (so that they
// remove what a test process that died left, the UE namespace too), torn
// down at cleanup.
func testLab(t testing.TB) topo.Lab {
	t.Helper()
	testenv.RequirePrivileges(t)
	for _, tool := range []string{"iperf3", "curl", "ping", "ethtool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s: %v (scripts/deps.sh installs it)", tool, err)
		}
	}
	name := fmt.Sprintf("sluicetest-%d-g%d", os.Getpid(), labSeq.Add(1))
	t.Cleanup(func() {
		if err := topo.Down(name); err != nil {
			t.Errorf("tear down: %v", err)
		}
	})
	lab, err := topo.Up(topo.Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// establish runs upfd in the lab and establishes n sessions of profile p
// with the SMF emulator, deleted at cleanup. Their MBR is 100 Gbit/s each
// way: under the profiles' session AMBR (1 Gbit/s up, 2 down with
// open5gs) TCP measures upfd's QER (the iperf step's mbr does), not the
// gNB.
func establish(t testing.TB, lab topo.Lab, p smf.Profile, n int) []smf.Session {
	t.Helper()
	log, _ := testenv.StartUPFD(t, lab.UPF, upfdConfig)
	t.Cleanup(func() { // runs after upfd's stop, which StartUPFD registered
		if t.Failed() {
			t.Logf("upfd's log:\n%s", log)
		}
	})
	c, err := smf.Dial(smf.Config{Namespace: lab.SMF, Profile: p, T1: time.Second, N1: 3,
		MBR: &smf.Bitrate{UplinkKbps: 100_000_000, DownlinkKbps: 100_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.Delete(ctx); err != nil {
			t.Errorf("delete the sessions: %v", err)
		}
		c.Close()
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = c.Associate(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("association: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Establish(ctx, n); err != nil {
		t.Fatal(err)
	}
	return c.Sessions()
}

// newGNB builds the gNB with sessions and attaches it, all undone at
// cleanup.
func newGNB(t testing.TB, lab topo.Lab, sessions []smf.Session, o Options) *GNB {
	t.Helper()
	o.Lab, o.Sessions = lab, sessions
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("close the gNB: %v", err)
		}
	})
	if err := g.Attach(); err != nil {
		t.Fatal(err)
	}
	return g
}

// page is what the DN's web server answers, by the client's address.
func page(client string) string { return "sluice page for " + client + "\n" }

// serveWeb runs a web server in the DN on the DN hosts' addresses, port
// 80, until the test ends.
func serveWeb(t testing.TB, lab topo.Lab) {
	t.Helper()
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			io.WriteString(w, page(host))
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	for _, a := range []netip.Addr{topo.DNHost, topo.DNHostV6} {
		var l net.Listener
		err := lab.Do(lab.DN, func() (err error) {
			l, err = net.Listen("tcp", netip.AddrPortFrom(a, 80).String())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(l)
	}
	t.Cleanup(func() { srv.Close() })
}

// serveIperf runs an iperf3 server in the DN on addr until the test ends.
func serveIperf(t testing.TB, lab topo.Lab, addr netip.Addr, port int) {
	t.Helper()
	cmd := lab.Command(lab.DN, "iperf3", "-s", "-B", addr.String(), "-p", fmt.Sprint(port))
	var out testenv.Log
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // ip netns exec execs iperf3: this is its PID
		cmd.Wait()
		if t.Failed() {
			t.Logf("iperf3 server:\n%s", out.String())
		}
	})
	// It listens within moments; a client that comes first is refused.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var c net.Conn
		err := lab.Do(lab.DN, func() (err error) {
			c, err = net.DialTimeout("tcp", netip.AddrPortFrom(addr, uint16(port)).String(), time.Second)
			return err
		})
		if err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("iperf3 server did not listen:\n%s", out.String())
}

// run runs a command of the UE namespace for at most limit and returns
// its standard output.
func runUE(t testing.TB, g *GNB, limit time.Duration, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := g.Command(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

// iperfResult is what iperf3 -J says of a test, as far as we need it.
type iperfResult struct {
	End struct {
		SumSent     iperfSum `json:"sum_sent"`
		SumReceived iperfSum `json:"sum_received"`
	} `json:"end"`
}

type iperfSum struct {
	Seconds       float64 `json:"seconds"`
	Bytes         uint64  `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   uint64  `json:"retransmits"`
}

// iperf runs iperf3 TCP from UE ue to the server at dst for d, uplink or
// (reverse) downlink, and returns what arrived.
func iperf(t testing.TB, g *GNB, ue, dst netip.Addr, port int, d time.Duration, reverse bool) iperfSum {
	t.Helper()
	r, err := runIperf(g, ue, dst, port, d, reverse)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runIperf is iperf, for any goroutine.
func runIperf(g *GNB, ue, dst netip.Addr, port int, d time.Duration, reverse bool) (iperfSum, error) {
	args := []string{"-c", dst.String(), "-B", ue.String(), "-p", fmt.Sprint(port), "-t", fmt.Sprint(d.Seconds()), "-J"}
	if reverse {
		args = append(args, "-R")
	}
	ctx, cancel := context.WithTimeout(context.Background(), d+20*time.Second)
	defer cancel()
	out, err := g.Command(ctx, "iperf3", args...).Output()
	var r iperfResult
	if err == nil {
		err = json.Unmarshal(out, &r)
	}
	if err != nil {
		return iperfSum{}, fmt.Errorf("iperf3 %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	// What the receiver got; the sender's retransmissions.
	r.End.SumReceived.Retransmits = r.End.SumSent.Retransmits
	return r.End.SumReceived, nil
}

func TestPrivilegedRealUEsThroughUPFD(t *testing.T) {
	lab := testLab(t)
	// open5gs: IPv4v6 sessions, so that every UE has an IPv6 /64 too;
	// a thousand UEs, the goal.
	sessions := establish(t, lab, smf.Open5GS, 1000)
	g := newGNB(t, lab, sessions, Options{})
	if g.UplinkMode() != UplinkXDP {
		t.Errorf("uplink %v with upfd, whose n3 has a native XDP program; want xdp", g.UplinkMode())
	}
	serveWeb(t, lab)
	serveIperf(t, lab, topo.DNHost, 5201)
	serveIperf(t, lab, topo.DNHostV6, 5202)
	ues := g.UEs()
	first, last := ues[0], ues[len(ues)-1]

	t.Run("a UE fetches a page over HTTP", func(t *testing.T) {
		for _, u := range []UE{first, ues[500], last} {
			got := runUE(t, g, 10*time.Second, "curl", "-sS", "--max-time", "5", "--interface", u.Addr.String(), "http://"+topo.DNHost.String()+"/")
			if string(got) != page(u.Addr.String()) {
				t.Errorf("UE %v got %q, want %q", u.Addr, got, page(u.Addr.String()))
			}
		}
	})
	t.Run("an IPv6 UE fetches a page, with curl and with Go", func(t *testing.T) {
		got := runUE(t, g, 10*time.Second, "curl", "-sS", "--max-time", "5", "--interface", last.AddrV6.String(), "http://["+topo.DNHostV6.String()+"]/")
		if string(got) != page(last.AddrV6.String()) {
			t.Errorf("curl from %v: %q, want %q", last.AddrV6, got, page(last.AddrV6.String()))
		}
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return g.Dial(ctx, 7, network, addr)
			}}}
		r, err := client.Get("http://[" + topo.DNHostV6.String() + "]/")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil || string(body) != page(ues[7].AddrV6.String()) {
			t.Errorf("Go client as UE 7: %q, %v; want %q", body, err, page(ues[7].AddrV6.String()))
		}
	})
	t.Run("ping", func(t *testing.T) {
		runUE(t, g, 10*time.Second, "ping", "-c", "3", "-i", "0.2", "-W", "2", "-I", ues[3].Addr.String(), topo.DNHost.String())
		runUE(t, g, 10*time.Second, "ping", "-6", "-c", "3", "-i", "0.2", "-W", "2", "-I", ues[3].AddrV6.String(), topo.DNHostV6.String())
	})
	t.Run("iperf3 TCP each way", func(t *testing.T) {
		before, err := g.Counters()
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name    string
			ue, dn  netip.Addr
			port    int
			reverse bool
		}{
			{"uplink", ues[10].Addr, topo.DNHost, 5201, false},
			{"downlink", ues[11].Addr, topo.DNHost, 5201, true},
			{"uplink, IPv6", ues[12].AddrV6, topo.DNHostV6, 5202, false},
			{"downlink, IPv6", ues[13].AddrV6, topo.DNHostV6, 5202, true},
		} {
			d := 3 * time.Second
			if strings.Contains(tc.name, "IPv6") {
				d = time.Second
			}
			r := iperf(t, g, tc.ue, tc.dn, tc.port, d, tc.reverse)
			t.Logf("%s: %d bytes in %.1f s, %.0f Mbit/s", tc.name, r.Bytes, r.Seconds, r.BitsPerSecond/1e6)
			if r.Bytes < 1<<20 {
				t.Errorf("%s: %d bytes arrived; want some megabytes", tc.name, r.Bytes)
			}
		}
		after, err := g.Counters()
		if err != nil {
			t.Fatal(err)
		}
		for i := 10; i < 14; i++ {
			up, down := after.UEs[i].UplinkBytes-before.UEs[i].UplinkBytes, after.UEs[i].DownlinkBytes-before.UEs[i].DownlinkBytes
			if up < 1<<10 || down < 1<<10 {
				t.Errorf("UE %d: the gNB carried %d bytes up, %d down; want both", i, up, down)
			}
		}
		if after.UplinkDropped+after.DownlinkDropped != 0 {
			t.Errorf("the gNB dropped %d uplink and %d downlink frames", after.UplinkDropped, after.DownlinkDropped)
		}
	})
	t.Run("the uplink from TC", func(t *testing.T) {
		if err := g.Detach(); err != nil {
			t.Fatal(err)
		}
		g.uplink = UplinkTC
		if err := g.Attach(); err != nil {
			t.Fatal(err)
		}
		if got := runUE(t, g, 10*time.Second, "curl", "-sS", "--max-time", "5", "--interface", ues[20].Addr.String(), "http://"+topo.DNHost.String()+"/"); string(got) != page(ues[20].Addr.String()) {
			t.Errorf("got %q", got)
		}
		r := iperf(t, g, ues[21].Addr, topo.DNHost, 5201, time.Second, false)
		if r.Bytes < 1<<20 {
			t.Errorf("%d bytes arrived; want some megabytes", r.Bytes)
		}
	})
	t.Run("the ceiling: the same UEs joined straight to the DN", func(t *testing.T) {
		if err := g.Use(Direct); err != nil {
			t.Fatal(err)
		}
		before, err := g.Counters()
		if err != nil {
			t.Fatal(err)
		}
		r := iperf(t, g, ues[30].Addr, topo.DNHost, 5201, time.Second, false)
		got := runUE(t, g, 10*time.Second, "curl", "-sS", "--max-time", "5", "--interface", ues[31].AddrV6.String(), "http://["+topo.DNHostV6.String()+"]/")
		after, err := g.Counters()
		if err != nil {
			t.Fatal(err)
		}
		if r.Bytes < 1<<20 || string(got) != page(ues[31].AddrV6.String()) {
			t.Errorf("direct: iperf3 %d bytes, page %q", r.Bytes, got)
		}
		if after.Total != before.Total {
			t.Errorf("the gNB carried %+v while the UEs went direct", after.Total)
		}
		if err := g.Use(Tunnel); err != nil {
			t.Fatal(err)
		}
		runUE(t, g, 10*time.Second, "curl", "-sS", "--max-time", "5", "--interface", ues[32].Addr.String(), "http://"+topo.DNHost.String()+"/")
		if c, err := g.Counters(); err != nil || c.UEs[32].UplinkPackets == 0 {
			t.Errorf("after Use(Tunnel), UE 32 counted %+v (%v): want its packets through the gNB", c.UEs[32], err)
		}
	})
	t.Run("Detach and Close leave the lab as it was", func(t *testing.T) {
		if err := g.Detach(); err != nil {
			t.Fatal(err)
		}
		for _, feature := range []string{"tx-checksumming", "generic-receive-offload"} {
			if on, err := topo.OffloadOn(lab.DN, topo.DevN6, feature); err != nil || !on {
				t.Errorf("the DN's n6: %s %v (%v), want on again", feature, on, err)
			}
		}
		for _, d := range [][2]string{{lab.DN, topo.DevN6}, {lab.GNB, topo.DevN3}} {
			if q, err := hasQdisc(d[0], d[1]); err != nil || q {
				t.Errorf("%s/%s: a qdisc left (%v)", d[0], d[1], err)
			}
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		devs, err := topo.Show(lab.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range devs {
			if d.XDP != nil && d.Namespace != lab.UPF || d.Name == DevGNBUE || d.Name == DevDirect {
				t.Errorf("left %s/%s, XDP %v", d.Namespace, d.Name, d.XDP)
			}
		}
		if _, err := os.Stat("/run/netns/" + g.Namespace()); err == nil {
			t.Errorf("the UE namespace %s is left", g.Namespace())
		}
		if off, err := topo.Open(lab.Name); err != nil {
			t.Errorf("the lab after Close: %v (%v)", err, off)
		}
	})
}
