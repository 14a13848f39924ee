package topo

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
)

// Device is a network device of a lab, as it is now.
type Device struct {
	Namespace string
	Name      string
	MAC       net.HardwareAddr
	Up        bool
	Queues    int            // TX queues (as many RX)
	Addrs     []netip.Prefix // global ones: no link-local or loopback addresses
	Peer      string         // "namespace/device" of a veth's other end in the lab, or ""
	// XDP names the programs attached ("xdp_ref#42 native"), nil for none.
	XDP []string
	// GRO is on: a veth drops the frames an XDP program on its peer
	// redirects into it unless it has GRO on or an XDP program of its own.
	// The lab's veths all have GRO on.
	GRO bool
}

// Show lists the devices of the lab called name, namespace by namespace,
// whatever state it is in; ErrNoLab if none of its namespaces is there.
// The loopback is listed where it carries lab addresses (the DN's hosts).
func Show(name string) ([]Device, error) {
	if name == "" {
		name = DefaultName
	}
	var devs []Device
	var links []nsLink // every link of the lab (each namespace has lo), for finding peers
	for _, ns := range NamesOf(name).all() {
		if !exists(ns) {
			continue
		}
		s, err := readState(ns)
		if err != nil {
			return nil, err
		}
		for _, k := range s.links {
			links = append(links, nsLink{ns, k})
			d := deviceOf(ns, k)
			if k.Name == "lo" && len(d.Addrs) == 0 {
				continue
			}
			if k.Name != "lo" {
				if d.GRO, err = OffloadOn(ns, k.Name, "generic-receive-offload"); err != nil {
					return nil, err
				}
			}
			devs = append(devs, d)
		}
	}
	if links == nil {
		return nil, fmt.Errorf("topo: %w %q: `upflab topo up --name %s` makes it", ErrNoLab, name, name)
	}
	for i, d := range devs {
		devs[i].Peer = peerOf(d, links)
	}
	return devs, nil
}

// nsLink is a link and the namespace it is in.
type nsLink struct {
	ns string
	k  ipLink
}

func deviceOf(ns string, k ipLink) Device {
	d := Device{Namespace: ns, Name: k.Name, Up: k.up(), Queues: k.TxQueues, XDP: k.XDP.programs()}
	d.MAC, _ = net.ParseMAC(k.MAC)
	for _, a := range k.Addrs {
		if a.Scope == "global" {
			d.Addrs = append(d.Addrs, netip.PrefixFrom(a.Local, a.PrefixLen))
		}
	}
	return d
}

// peerOf finds d's other end among the lab's links: the one in another
// namespace whose ifindex d names as its peer, and which names d's back.
// Indexes are per namespace: the two-way check is what makes a match sure.
func peerOf(d Device, links []nsLink) string {
	i := slices.IndexFunc(links, func(l nsLink) bool { return l.ns == d.Namespace && l.k.Name == d.Name })
	me := links[i].k
	for _, l := range links {
		if l.ns != d.Namespace && me.PeerIndex != 0 && l.k.Index == me.PeerIndex && l.k.PeerIndex == me.Index {
			return l.ns + "/" + l.k.Name
		}
	}
	return ""
}

// xdpModes are the kernel's XDP_ATTACHED_* values.
var xdpModes = map[int]string{1: "native", 2: "generic", 3: "offload"}

func (x *ipXDP) programs() []string {
	if x == nil {
		return nil
	}
	attached := x.Attached
	if len(attached) == 0 && x.Prog != nil {
		attached = []ipXDPAttach{{x.Mode, x.Prog}}
	}
	var progs []string
	for _, a := range attached {
		if a.Prog != nil {
			progs = append(progs, fmt.Sprintf("%s#%d %s", a.Prog.Name, a.Prog.ID, xdpModes[a.Mode]))
		}
	}
	return progs
}
