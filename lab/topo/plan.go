// Package topo builds the lab's world: network namespaces for the SMF, the
// gNB, the UPF and the data network, joined by veth pairs, with addresses
// from the benchmarking range 198.18.0.0/15 (RFC 2544). Nothing of it is
// placed in the root namespace and no namespace has a route out.
//
//	<name>-smf  n4 198.18.4.1 ------- n4 198.18.4.2  <name>-upf
//	<name>-gnb  n3 198.18.3.1 ------- n3 198.18.3.2  <name>-upf
//	<name>-dn   n6 198.18.6.1 ------- n6 198.18.6.2  <name>-upf
//	<name>-upf2 n9 198.18.9.1 ------- n9 198.18.9.2  <name>-upf   (on request)
//
// The DN hosts 198.18.7.0/24 (198.18.7.10 answers pings and echoes) and
// routes the UE pools (10.32.0.0/12, 2001:db8:30::/44: a million UEs) back
// to the UPF with one route each. IPv6 runs beside IPv4 on N3 and N6
// (2001:2:0:3::/64, 2001:2:0:6::/64, DN 2001:2:0:7::/64). Every MAC is fixed
// and every neighbour static, so that what a generator sends is predictable.
// Every veth end has GRO on, so that it takes the frames XDP on its peer
// sends into it whether or not it has an XDP program of its own: any UPF's
// XDP can forward to the gNB and the DN, and the generator to any UPF.
//
// Up builds a lab (and repairs a half-made one), Down removes it, Show
// lists its devices, with the XDP programs on them. A Lab runs functions
// and commands inside its namespaces.
package topo

import (
	"net"
	"net/netip"
)

// DefaultName prefixes the namespaces of `upflab topo up` without --name.
const DefaultName = "upflab"

// The address plan. Device names are the same at both ends of a link
// (each end is in its own namespace).
var (
	SMFN4 = netip.MustParseAddr("198.18.4.1")
	UPFN4 = netip.MustParseAddr("198.18.4.2")

	GNBN3   = netip.MustParseAddr("198.18.3.1")
	GNB2N3  = netip.MustParseAddr("198.18.3.11") // a second gNB address, for handovers
	UPFN3   = netip.MustParseAddr("198.18.3.2")
	GNBN3v6 = netip.MustParseAddr("2001:2:0:3::1")
	UPFN3v6 = netip.MustParseAddr("2001:2:0:3::2")

	DNN6    = netip.MustParseAddr("198.18.6.1")
	UPFN6   = netip.MustParseAddr("198.18.6.2")
	DNN6v6  = netip.MustParseAddr("2001:2:0:6::1")
	UPFN6v6 = netip.MustParseAddr("2001:2:0:6::2")

	DNHosts   = netip.MustParsePrefix("198.18.7.0/24")
	DNHost    = netip.MustParseAddr("198.18.7.10")
	DNHostsV6 = netip.MustParsePrefix("2001:2:0:7::/64")
	DNHostV6  = netip.MustParseAddr("2001:2:0:7::10")

	UPF2N9 = netip.MustParseAddr("198.18.9.1")
	UPFN9  = netip.MustParseAddr("198.18.9.2")

	// The UE pools exist only inside the lab's namespaces. Each numbers
	// a million UEs and more (UESlots), so that a scenario's 1,000,000
	// sessions fit.
	UEPool   = netip.MustParsePrefix("10.32.0.0/12")
	UEPoolV6 = netip.MustParsePrefix("2001:db8:30::/44")
)

// Fixed MACs: 02:00:00:00:<link>:<host>, host 1 the far end, 2 the UPF.
var (
	MACSMFN4  = mac("02:00:00:00:04:01")
	MACUPFN4  = mac("02:00:00:00:04:02")
	MACGNBN3  = mac("02:00:00:00:03:01")
	MACUPFN3  = mac("02:00:00:00:03:02")
	MACDNN6   = mac("02:00:00:00:06:01")
	MACUPFN6  = mac("02:00:00:00:06:02")
	MACUPF2N9 = mac("02:00:00:00:09:01")
	MACUPFN9  = mac("02:00:00:00:09:02")
)

// Device names, the same at both ends of each link.
const (
	DevN3 = "n3"
	DevN4 = "n4"
	DevN6 = "n6"
	DevN9 = "n9"
)

// Names of the namespaces of a lab called name. UE is lab/gnb's, which
// the topology does not build, named here so that Down removes it too.
type Names struct{ SMF, GNB, UPF, DN, UPF2, UE string }

// NamesOf gives the namespaces of the lab called name.
func NamesOf(name string) Names {
	return Names{SMF: name + "-smf", GNB: name + "-gnb", UPF: name + "-upf", DN: name + "-dn", UPF2: name + "-upf2",
		UE: name + "-ue"}
}

// all are the namespaces in the order they are built, UPF2 if it is set.
func (n Names) all() []string {
	ns := []string{n.SMF, n.GNB, n.UPF, n.DN}
	if n.UPF2 != "" {
		ns = append(ns, n.UPF2)
	}
	return ns
}

func mac(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}
