package gnb

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/sluice-upf/sluice/lab/topo"
)

// Path is the way the UEs reach the DN's hosts.
type Path int

const (
	// Tunnel: through the gNB, its tunnels and the UPF, as New makes it.
	Tunnel Path = iota
	// Direct: a veth from the UE namespace straight to the DN's, with the
	// same MTU and offloads as ue0 and the DN's n6: the ceiling of the
	// same stacks and tools, without tunnel or UPF.
	Direct
)

// DevDirect is the direct link's device, at both ends.
const DevDirect = "ceil"

// MACs of the direct link (link 0x0c): the DN's end 1, the UEs' 2.
var (
	MACDirectDN = mustMAC("02:00:00:00:0c:01")
	MACDirectUE = mustMAC("02:00:00:00:0c:02")
)

// The direct link's next hops, link-local and static as the UEs' gateway.
var (
	gwDN     = netip.MustParseAddr("169.254.1.1") // the DN, to the UEs
	gwDNv6   = netip.MustParseAddr("fe80::1")
	gwDirect = netip.MustParseAddr("169.254.1.2") // the UEs, to the DN
	gwDirV6  = netip.MustParseAddr("fe80::2")
)

// Use sends the UEs' traffic with the DN's hosts by path p. Direct adds
// the link and routes more specific than the lab's on both sides: the
// DN's hosts from the UE namespace, each UE's address and /64 from the DN;
// Tunnel removes them. The gNB's programs stay as they are.
func (g *GNB) Use(p Path) error {
	switch p {
	case Tunnel:
		return g.removeDirect()
	case Direct:
		if g.direct {
			return nil
		}
		g.direct = true
		if err := g.addDirect(); err != nil {
			return fmt.Errorf("gnb: direct link: %w", err)
		}
		return nil
	}
	return fmt.Errorf("gnb: no path %d", p)
}

func (g *GNB) addDirect() error {
	ue, dn := g.ns, g.lab.DN
	mtu := strconv.Itoa(MTU)
	err := topo.IPAll([][]string{
		{"-n", ue, "link", "add", DevDirect, "address", MACDirectUE.String(), "mtu", mtu,
			"type", "veth", "peer", "name", DevDirect, "address", MACDirectDN.String(), "mtu", mtu, "netns", dn},
		{"-n", ue, "link", "set", DevDirect, "addrgenmode", "none"},
		{"-n", dn, "link", "set", DevDirect, "addrgenmode", "none"},
		{"-n", ue, "link", "set", DevDirect, "up"},
		{"-n", dn, "link", "set", DevDirect, "up"},
	})
	if err != nil {
		return err
	}
	// As on the tunnel's path: the stacks make their checksums and GSO
	// cuts MTU-sized packets; GRO is off, as on ue0 and the DN's n6. No
	// qdisc: without XDP on its peer a veth hands a packet to the peer's
	// backlog at once, and has no ring to be full.
	for _, ns := range []string{ue, dn} {
		if err := setOffloads(ns, DevDirect, "tx", "off", "gro", "off"); err != nil {
			return err
		}
	}
	err = ipBatch(ue, []string{
		fmt.Sprintf("neigh add %v lladdr %v dev %s nud permanent", gwDN, MACDirectDN, DevDirect),
		fmt.Sprintf("route add %v via %v dev %s onlink", topo.DNHosts, gwDN, DevDirect),
		fmt.Sprintf("neigh add %v lladdr %v dev %s nud permanent", gwDNv6, MACDirectDN, DevDirect),
		fmt.Sprintf("route add %v via %v dev %s", topo.DNHostsV6, gwDNv6, DevDirect),
	})
	if err != nil {
		return err
	}
	lines := []string{
		fmt.Sprintf("neigh add %v lladdr %v dev %s nud permanent", gwDirect, MACDirectUE, DevDirect),
		fmt.Sprintf("neigh add %v lladdr %v dev %s nud permanent", gwDirV6, MACDirectUE, DevDirect),
	}
	for _, u := range g.ues {
		lines = append(lines, fmt.Sprintf("route add %v/32 via %v dev %s onlink", u.Addr, gwDirect, DevDirect))
		if u.AddrV6.IsValid() {
			lines = append(lines, fmt.Sprintf("route add %v via %v dev %s", u.Session.UEv6.Masked(), gwDirV6, DevDirect))
		}
	}
	return ipBatch(dn, lines)
}

// removeDirect deletes the direct link, and with it its routes at both ends.
func (g *GNB) removeDirect() error {
	if !g.direct {
		return nil
	}
	g.direct = false
	if _, err := topo.IP("-n", g.ns, "link", "del", DevDirect); err != nil {
		return fmt.Errorf("gnb: remove the direct link: %w", err)
	}
	return nil
}
