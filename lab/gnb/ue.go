package gnb

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strconv"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/lab/topo"
)

// The UEs' next hops: link-local, never in a packet, each the key of a
// static neighbour with the MAC of the far end, so that nothing on the
// link answers ARP or ND.
var (
	gwUE   = netip.MustParseAddr("169.254.0.1") // the gNB, to the UEs
	gwUEv6 = netip.MustParseAddr("fe80::1")
)

// build makes the UE namespace, ue0 and gnbue, the UEs' addresses and
// their default routes toward the gNB.
//
// The UEs' packets must reach the gNB's program whole and with their
// checksums made: XDP on a veth sees a frame as its sender's stack left
// it, and a redirected frame is not finished by the kernel later. TX
// checksum offload is off on ue0, so the stack makes every checksum (TSO
// goes with it). GSO stays on: it cuts a large send into MTU-sized packets
// before ue0, checksummed, at a lower cost to the UE's stack. ue0 has a
// qdisc, so that a UE's stack waits when gnbue's ring is full rather than
// lose what it sent.
func (g *GNB) build() error {
	ue, gnb := g.ns, g.lab.GNB
	q := strconv.Itoa(max(g.lab.Queues, 1))
	mtu := strconv.Itoa(MTU)
	err := topo.IPAll([][]string{
		{"netns", "add", ue},
		{"-n", ue, "link", "set", "lo", "up"},
		// made in the gNB's namespace, its peer straight in the UEs', so
		// that nothing passes through the root namespace
		{"-n", gnb, "link", "add", DevGNBUE, "address", MACGNBUE.String(), "mtu", mtu, "numtxqueues", q, "numrxqueues", q,
			"type", "veth", "peer", "name", DevUE, "address", MACUE.String(), "mtu", mtu, "numtxqueues", q, "numrxqueues", q, "netns", ue},
		// gnbue is no host's: no IPv6 of its own, no ND or MLD to the UEs
		{"netns", "exec", gnb, "sysctl", "-qw", "net.ipv6.conf." + DevGNBUE + ".disable_ipv6=1"},
		{"-n", gnb, "link", "set", DevGNBUE, "up"},
		// nor link-local addresses on ue0, whose ND and MLD the gNB would
		// only pass to its kernel
		{"-n", ue, "link", "set", DevUE, "addrgenmode", "none"},
		{"netns", "exec", ue, "sysctl", "-qw", "net.ipv6.conf." + DevUE + ".accept_ra=0"},
		{"-n", ue, "link", "set", DevUE, "up"},
	})
	if err != nil {
		return fmt.Errorf("gnb: build the UE namespace: %w", err)
	}
	if err := setOffloads(ue, DevUE, "tx", "off"); err != nil {
		return fmt.Errorf("gnb: %w", err)
	}
	if err := setQdisc(ue, DevUE, true); err != nil {
		return fmt.Errorf("gnb: %w", err)
	}
	lines := make([]string, 0, 2*len(g.ues)+4)
	for _, u := range g.ues {
		lines = append(lines, fmt.Sprintf("addr add %v/32 dev %s", u.Addr, DevUE))
		if u.AddrV6.IsValid() {
			lines = append(lines, fmt.Sprintf("addr add %v/128 dev %s nodad", u.AddrV6, DevUE))
		}
	}
	lines = append(lines,
		fmt.Sprintf("neigh add %v lladdr %v dev %s nud permanent", gwUE, MACGNBUE, DevUE),
		fmt.Sprintf("route add default via %v dev %s onlink", gwUE, DevUE),
		fmt.Sprintf("neigh add %v lladdr %v dev %s nud permanent", gwUEv6, MACGNBUE, DevUE),
		fmt.Sprintf("route add ::/0 via %v dev %s", gwUEv6, DevUE))
	if err := ipBatch(ue, lines); err != nil {
		return fmt.Errorf("gnb: the UEs' addresses and routes: %w", err)
	}
	return nil
}

// Command prepares a program to run in the UE namespace, as `ip netns
// exec` does. It is one UE or another by the address it binds: iperf3 -B,
// curl --interface, ping -I; unbound, the kernel picks (UE 0's address,
// the first on ue0, as a rule).
func (g *GNB) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", g.ns, name}, args...)...)
}

// Do runs fn inside the UE namespace.
func (g *GNB) Do(fn func() error) error { return netns.Do(g.ns, fn) }

// Dial connects from UE i to address, an IP literal and port ("tcp",
// "udp"): from its IPv4 address, or its IPv6 one to an IPv6 address. The
// connection may be used from anywhere: a socket stays in its namespace.
// It fits http.Transport's DialContext.
func (g *GNB) Dial(ctx context.Context, i int, network, address string) (net.Conn, error) {
	if i < 0 || i >= len(g.ues) {
		return nil, fmt.Errorf("gnb: no UE %d of %d", i, len(g.ues))
	}
	dst, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil, fmt.Errorf("gnb: dial %s: want an IP address and a port: %w", address, err)
	}
	src := g.ues[i].Addr
	if dst.Addr().Is6() {
		if src = g.ues[i].AddrV6; !src.IsValid() {
			return nil, fmt.Errorf("gnb: dial %s from UE %d: its session has no IPv6 prefix", address, i)
		}
	}
	d := net.Dialer{}
	switch network {
	case "tcp", "tcp4", "tcp6":
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, 0))
	case "udp", "udp4", "udp6":
		d.LocalAddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0))
	default:
		return nil, fmt.Errorf("gnb: dial over %q: want tcp or udp", network)
	}
	var c net.Conn
	err = g.Do(func() (err error) {
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	return c, err
}
