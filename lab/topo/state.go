package topo

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// What `ip -j` says about a namespace, as far as the lab needs it.

type ipLink struct {
	Index     int      `json:"ifindex"`
	PeerIndex int      `json:"link_index"` // a veth's peer, in its own namespace
	Name      string   `json:"ifname"`
	Flags     []string `json:"flags"`
	MAC       string   `json:"address"`
	TxQueues  int      `json:"num_tx_queues"`
	RxQueues  int      `json:"num_rx_queues"`
	Addrs     []ipAddr `json:"addr_info"`
	XDP       *ipXDP   `json:"xdp"`
}

type ipAddr struct {
	Local     netip.Addr `json:"local"`
	PrefixLen int        `json:"prefixlen"`
	Scope     string     `json:"scope"`
}

// ipXDP lists the programs attached: Attached when there may be several
// (one per mode), Prog and Mode alone otherwise.
type ipXDP struct {
	Mode     int           `json:"mode"`
	Prog     *ipProg       `json:"prog"`
	Attached []ipXDPAttach `json:"attached"`
}

type ipXDPAttach struct {
	Mode int     `json:"mode"`
	Prog *ipProg `json:"prog"`
}

type ipProg struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

type ipRoute struct {
	Dst     string `json:"dst"`
	Gateway string `json:"gateway"`
	Dev     string `json:"dev"`
}

type ipNeigh struct {
	Dst    string   `json:"dst"`
	Dev    string   `json:"dev"`
	LLAddr string   `json:"lladdr"`
	State  []string `json:"state"`
}

// nsState is one namespace's devices, routes and neighbours.
type nsState struct {
	links  []ipLink
	routes []ipRoute
	neighs []ipNeigh
}

func readState(ns string) (nsState, error) {
	var s nsState
	var v6 []ipRoute
	for _, q := range []struct {
		v    any
		args []string
	}{
		{&s.links, []string{"-d", "addr", "show"}},
		{&s.routes, []string{"-4", "route", "show"}},
		{&v6, []string{"-6", "route", "show"}},
		{&s.neighs, []string{"neigh", "show"}},
	} {
		if err := ipJSON(q.v, append([]string{"-n", ns}, q.args...)...); err != nil {
			return nsState{}, fmt.Errorf("topo: read namespace %s: %w", ns, err)
		}
	}
	s.routes = append(s.routes, v6...)
	return s, nil
}

func (s nsState) link(name string) (ipLink, bool) {
	i := slices.IndexFunc(s.links, func(k ipLink) bool { return k.Name == name })
	if i < 0 {
		return ipLink{}, false
	}
	return s.links[i], true
}

func (k ipLink) up() bool { return slices.Contains(k.Flags, "UP") }

func (k ipLink) has(p netip.Prefix) bool {
	return slices.ContainsFunc(k.Addrs, func(a ipAddr) bool { return a.Local == p.Addr() && a.PrefixLen == p.Bits() })
}

// queuesOf is how many TX queues dev in ns has, 0 if it cannot tell.
func queuesOf(ns, dev string) int {
	var links []ipLink
	if err := ipJSON(&links, "-n", ns, "-d", "link", "show", "dev", dev); err != nil || len(links) != 1 {
		return 0
	}
	return links[0].TxQueues
}

// deviations lists how what is there differs from the lab l, nothing if
// it is complete. Extra addresses or routes someone added are not looked
// for; a second UPF namespace that was not asked for is.
func (l Lab) deviations() ([]string, error) {
	var off []string
	if upf2 := NamesOf(l.Name).UPF2; !l.N9 && exists(upf2) {
		off = append(off, "namespace "+upf2+" is there without --n9")
	}
	states := map[string]nsState{}
	for _, ns := range l.all() {
		if !exists(ns) {
			off = append(off, "no namespace "+ns)
			continue
		}
		s, err := readState(ns)
		if err != nil {
			return nil, err
		}
		states[ns] = s
	}
	if len(states) < len(l.all()) {
		return off, nil
	}
	for _, ns := range l.all() {
		if lo, _ := states[ns].link("lo"); !lo.up() {
			off = append(off, ns+": lo is down")
		}
	}
	// GRO, which topo up turns on, is not looked at: a user of the lab may
	// turn it off for a while (to give a stack its packets one by one), and
	// the lab is no less complete for it.
	for _, v := range l.veths() {
		off = append(off, vethDeviations(v, l.Queues, states)...)
	}
	off = append(off, endDeviations(l.dnHosts(), "lo", states)...)
	for _, n := range l.neighbours() {
		if !slices.ContainsFunc(states[n.ns].neighs, n.matches) {
			off = append(off, fmt.Sprintf("%s: no permanent neighbour %s at %s on %s", n.ns, n.addr, n.mac, n.dev))
		}
	}
	for _, r := range l.routes() {
		if !slices.ContainsFunc(states[r.ns].routes, r.matches) {
			off = append(off, fmt.Sprintf("%s: no route to %s via %s on %s", r.ns, r.dst, r.via, r.dev))
		}
	}
	for _, ns := range l.routers() {
		out, err := IP("netns", "exec", ns, "sysctl", "-n", "net.ipv4.conf.all.forwarding", "net.ipv6.conf.all.forwarding")
		if err != nil {
			return nil, err
		}
		if strings.Join(strings.Fields(string(out)), " ") != "1 1" {
			off = append(off, ns+": forwarding is off")
		}
	}
	return off, nil
}

// vethDeviations checks both ends of v and that they are each other's peer.
func vethDeviations(v veth, queues int, states map[string]nsState) []string {
	off := append(endDeviations(v.far, v.dev, states), endDeviations(v.upf, v.dev, states)...)
	far, ok1 := states[v.far.ns].link(v.dev)
	upf, ok2 := states[v.upf.ns].link(v.dev)
	if !ok1 || !ok2 {
		return off
	}
	if far.PeerIndex != upf.Index || upf.PeerIndex != far.Index {
		off = append(off, fmt.Sprintf("%s/%s and %s/%s are not each other's peer", v.far.ns, v.dev, v.upf.ns, v.dev))
	}
	for _, k := range []ipLink{far, upf} {
		if k.TxQueues != queues || k.RxQueues != queues {
			off = append(off, fmt.Sprintf("%s has %d/%d TX/RX queues, not %d", v.dev, k.TxQueues, k.RxQueues, queues))
		}
	}
	return off
}

// endDeviations checks that dev is there in e's namespace, up, with e's
// MAC (if it has one) and addresses.
func endDeviations(e end, dev string, states map[string]nsState) []string {
	k, ok := states[e.ns].link(dev)
	if !ok {
		return []string{e.ns + ": no device " + dev}
	}
	var off []string
	if !k.up() {
		off = append(off, e.ns+": "+dev+" is down")
	}
	if e.mac != nil && !strings.EqualFold(k.MAC, e.mac.String()) {
		off = append(off, fmt.Sprintf("%s: %s has MAC %s, not %s", e.ns, dev, k.MAC, e.mac))
	}
	for _, a := range e.addrs {
		if !k.has(a) {
			off = append(off, fmt.Sprintf("%s: %s lacks %s", e.ns, dev, a))
		}
	}
	return off
}

// OffloadOn says whether an offload feature of dev in ns is on, as
// ethtool -k names it: generic-receive-offload, tx-checksumming.
func OffloadOn(ns, dev, feature string) (bool, error) {
	out, err := IP("netns", "exec", ns, "ethtool", "-k", dev)
	if err != nil {
		return false, fmt.Errorf("topo: read the features of %s/%s: %w", ns, dev, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, feature+":"); ok {
			return strings.HasPrefix(strings.TrimSpace(v), "on"), nil
		}
	}
	return false, fmt.Errorf("topo: ethtool -k %s in %s does not say whether %s is on", dev, ns, feature)
}

func (n neighbour) matches(e ipNeigh) bool {
	return e.Dev == n.dev && e.Dst == n.addr.String() && strings.EqualFold(e.LLAddr, n.mac.String()) && slices.Contains(e.State, "PERMANENT")
}

func (r route) matches(e ipRoute) bool {
	return e.Dev == r.dev && e.Dst == r.dst.String() && e.Gateway == r.via.String()
}
