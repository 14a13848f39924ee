package topo

import (
	"net"
	"net/netip"
	"strconv"
)

// The lab as data: buildCommands makes it, deviations compares it with
// what is there.

// veth is a link of the lab: a device of the same name at both ends.
type veth struct {
	dev      string
	far, upf end // upf is the end in the UPF's namespace
}

// end is one side of a veth.
type end struct {
	ns    string
	mac   net.HardwareAddr
	addrs []netip.Prefix
}

// route sends dst via a neighbour on dev.
type route struct {
	ns  string
	dst netip.Prefix
	via netip.Addr
	dev string
}

// neighbour is a static, permanent neighbour entry.
type neighbour struct {
	ns, dev string
	addr    netip.Addr
	mac     net.HardwareAddr
}

func (l Lab) veths() []veth {
	v := []veth{
		{DevN4, end{l.SMF, MACSMFN4, onLink(SMFN4)}, end{l.UPF, MACUPFN4, onLink(UPFN4)}},
		{DevN3, end{l.GNB, MACGNBN3, onLink(GNBN3, GNB2N3, GNBN3v6)}, end{l.UPF, MACUPFN3, onLink(UPFN3, UPFN3v6)}},
		{DevN6, end{l.DN, MACDNN6, onLink(DNN6, DNN6v6)}, end{l.UPF, MACUPFN6, onLink(UPFN6, UPFN6v6)}},
	}
	if l.N9 {
		v = append(v, veth{DevN9, end{l.UPF2, MACUPF2N9, onLink(UPF2N9)}, end{l.UPF, MACUPFN9, onLink(UPFN9)}})
	}
	return v
}

// dnHosts are the addresses the DN answers on, on its loopback.
func (l Lab) dnHosts() end {
	return end{ns: l.DN, addrs: []netip.Prefix{netip.PrefixFrom(DNHost, 32), netip.PrefixFrom(DNHostV6, 128)}}
}

// routes: the UPF reaches the DN's hosts, the DN the UE pools; nothing
// else, so no namespace has a way out.
func (l Lab) routes() []route {
	return []route{
		{l.UPF, DNHosts, DNN6, DevN6},
		{l.UPF, DNHostsV6, DNN6v6, DevN6},
		{l.DN, UEPool, UPFN6, DevN6},
		{l.DN, UEPoolV6, UPFN6v6, DevN6},
	}
}

// neighbours: each end of each link knows every address of the other end.
func (l Lab) neighbours() []neighbour {
	var n []neighbour
	for _, v := range l.veths() {
		for _, p := range [][2]end{{v.far, v.upf}, {v.upf, v.far}} {
			for _, a := range p[1].addrs {
				n = append(n, neighbour{p[0].ns, v.dev, a.Addr(), p[1].mac})
			}
		}
	}
	return n
}

// routers are the namespaces that forward: the UPFs.
func (l Lab) routers() []string {
	if l.N9 {
		return []string{l.UPF, l.UPF2}
	}
	return []string{l.UPF}
}

// buildCommands are the ip commands that make the lab from nothing, in
// order. Each veth is created in the UPF's namespace with its peer
// straight in the other, so that nothing passes through the root
// namespace.
func (l Lab) buildCommands() [][]string {
	var cmds [][]string
	add := func(args ...string) { cmds = append(cmds, args) }
	for _, ns := range l.all() {
		add("netns", "add", ns)
		add("-n", ns, "link", "set", "lo", "up")
	}
	q := strconv.Itoa(l.Queues)
	for _, v := range l.veths() {
		add("-n", v.upf.ns, "link", "add", v.dev, "address", v.upf.mac.String(), "numtxqueues", q, "numrxqueues", q,
			"type", "veth", "peer", "name", v.dev, "address", v.far.mac.String(), "numtxqueues", q, "numrxqueues", q, "netns", v.far.ns)
	}
	for _, v := range l.veths() {
		for _, e := range []end{v.far, v.upf} {
			cmds = append(cmds, addrCommands(e, v.dev)...)
			add("-n", e.ns, "link", "set", v.dev, "up")
			add(groCommand(e.ns, v.dev)...)
		}
	}
	cmds = append(cmds, addrCommands(l.dnHosts(), "lo")...)
	for _, n := range l.neighbours() {
		add("-n", n.ns, "neigh", "add", n.addr.String(), "lladdr", n.mac.String(), "dev", n.dev, "nud", "permanent")
	}
	for _, r := range l.routes() {
		add("-n", r.ns, "route", "add", r.dst.String(), "via", r.via.String(), "dev", r.dev)
	}
	for _, ns := range l.routers() {
		add("netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.all.forwarding=1", "net.ipv6.conf.all.forwarding=1")
	}
	return cmds
}

// addrCommands give e's addresses to dev; IPv6 ones skip duplicate
// address detection, which would keep them unusable for a while.
func addrCommands(e end, dev string) [][]string {
	var cmds [][]string
	for _, a := range e.addrs {
		c := []string{"-n", e.ns, "addr", "add", a.String(), "dev", dev}
		if a.Addr().Is6() {
			c = append(c, "nodad")
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// onLink gives each address its link's prefix: /24 for IPv4, /64 for IPv6.
func onLink(addrs ...netip.Addr) []netip.Prefix {
	p := make([]netip.Prefix, len(addrs))
	for i, a := range addrs {
		bits := 24
		if a.Is6() {
			bits = 64
		}
		p[i] = netip.PrefixFrom(a, bits)
	}
	return p
}

// groCommand turns GRO on for dev in ns. A veth end with GRO on has NAPI,
// without which it drops the frames that XDP on its peer redirects or
// transmits into it: a UPF's XDP toward the gNB and the DN when nothing
// there has an XDP program, or the generator's toward a UPF that has none.
func groCommand(ns, dev string) []string {
	return []string{"netns", "exec", ns, "ethtool", "-K", dev, "gro", "on"}
}
