package datapath

import (
	"net"
	"net/netip"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
)

var (
	macN3, macGNB, macN6      = testenv.MACN3, testenv.MACGNB, testenv.MACN6
	macRouter, macN9, macPeer = testenv.MACRouter, testenv.MACN9, testenv.MACPeer
)

// Addresses of the testenv.UPF namespace and what lies around it.
var (
	addrN3    = netip.MustParseAddr("198.18.3.2")
	addrN3v6  = netip.MustParseAddr("2001:2:0:3::2")
	addrN9    = netip.MustParseAddr("198.18.9.2")
	addrN6    = netip.MustParseAddr("198.18.6.2")
	addrN6v6  = netip.MustParseAddr("2001:2:0:6::2")
	addrGNB   = netip.MustParseAddr("198.18.3.1")
	addrGNBv6 = netip.MustParseAddr("2001:2:0:3::1")
	addrPeer  = netip.MustParseAddr("198.18.9.1")
	addrNoARP = netip.MustParseAddr("198.18.3.99") // on link, never resolved
	addrDN    = netip.MustParseAddr("198.18.7.10") // behind the router
	addrDNv6  = netip.MustParseAddr("2001:2:0:7::10")
	addrUE    = netip.MustParseAddr("10.45.0.2")
	prefixUE6 = netip.MustParsePrefix("2001:2:0:45::/64")
	addrUE6   = netip.MustParseAddr("2001:2:0:45::2")
)

// Endpoint IDs: the index in Options.GTPUAddrs.
const (
	epN3   = 0
	epN3v6 = 1
	epN9   = 2
)

// upfdListeners are upfd's sockets at their default ports: PFCP, the REST
// API, metrics.
var upfdListeners = []Listener{{"udp", 8805}, {"tcp", 8080}, {"tcp", 9090}}

// loadIn loads a fresh datapath inside ns, closed when the test ends.
func loadIn(t testing.TB, ns string, opts Options) *Datapath {
	t.Helper()
	if opts.Interfaces == nil {
		opts.Interfaces = []Interface{{Name: "n3", Role: N3}, {Name: "n6", Role: N6}, {Name: "n9", Role: N9}}
	}
	if opts.GTPUAddrs == nil {
		opts.GTPUAddrs = []netip.Addr{addrN3, addrN3v6, addrN9}
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = 1024
	}
	if opts.Listeners == nil {
		opts.Listeners = upfdListeners
	}
	var d *Datapath
	err := netns.Do(ns, func() (err error) {
		d, err = Load(opts)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// runXDP runs role's program once on frame as if it arrived on dev.
func runXDP(t testing.TB, d *Datapath, ns string, role Role, frame []byte) (Verdict, []byte) {
	t.Helper()
	out := make([]byte, len(frame)+256)
	var ret uint32
	err := netns.Do(ns, func() error {
		opts := &ebpf.RunOptions{
			Data:    frame,
			DataOut: out,
			Context: xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(d.ifaces[role].Index)},
		}
		var err error
		ret, err = d.Program(role).Run(opts)
		out = opts.DataOut
		return err
	})
	if err != nil {
		t.Fatalf("prog.Run: %v", err)
	}
	return Verdict(ret), out
}

func netInterface(name string) (int, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return 0, err
	}
	return ifc.Index, nil
}
