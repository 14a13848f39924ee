// Package gnb is the gNB's user plane for real UEs: UEs whose own kernel
// stacks send and receive (iperf3, curl, ping, a Go client) through any
// UPF, with the sessions of the SMF emulator (lab/smf).
//
//	<lab>-ue   ue0 ==veth== gnbue  <lab>-gnb  n3 ==veth== n3  <lab>-upf  n6 ==veth== n6  <lab>-dn
//	           10.32.0.1/32 ...    [xdp_gnb_ul]  [xdp_gnb_dl]
//	           2001:db8:30::1/128 ...
//
// The UEs are addresses on ue0 in a namespace of their own: session i's
// IPv4 address, and an address in its IPv6 /64 when it has one (the
// open5gs profile's IPv4v6 sessions). A program on gnbue puts what a UE
// sends in a G-PDU toward the session's uplink F-TEID, with a PDU Session
// Container holding its QFI, and sends it out of the gNB's n3; one on n3
// takes the G-PDUs of the sessions' downlink TEIDs out of their tunnel and
// sends them to ue0. A tool in the UE namespace is one UE or another by
// the address it binds: iperf3 -B, curl --interface, ping -I (Command, and
// Dial for Go).
//
// New builds the UE namespace and loads the programs; Attach puts them on
// the devices, for the steps that use real UEs (the gNB's n3 takes one XDP
// program, the generator's sink or the gNB's); Detach takes them off;
// Close removes it all. Use(Direct) joins the UE namespace straight to the
// DN, without tunnel or UPF: the ceiling of the same stacks and tools.
package gnb

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf/link"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

// Devices and link: ue0 in the UE namespace, gnbue in the gNB's, both with
// the UE's MTU, which leaves room for the tunnel on N3's 1500 bytes.
const (
	DevUE    = "ue0"
	DevGNBUE = "gnbue"
	MTU      = 1400
)

// Fixed MACs, after the lab's plan (02:00:00:00:<link>:<host>): link 0x0a,
// the gNB's end 1, the UEs' 2.
var (
	MACGNBUE = mustMAC("02:00:00:00:0a:01")
	MACUE    = mustMAC("02:00:00:00:0a:02")
)

// Uplink says how the uplink leaves the gNB's n3.
type Uplink int

const (
	// UplinkAuto is UplinkXDP if the UPF's n3 has an XDP program of its
	// own in native mode when Attach is called, else UplinkTC.
	UplinkAuto Uplink = iota
	// UplinkXDP: XDP on gnbue redirects the frame into n3. A veth takes
	// redirected frames only if its peer (the UPF's n3) has NAPI: a
	// native XDP program, as upfd's or eUPF's.
	UplinkXDP
	// UplinkTC: a TC program at gnbue's ingress sends the packet out of
	// n3, which any UPF takes, at the price of an skb on the way.
	UplinkTC
)

func (u Uplink) String() string {
	switch u {
	case UplinkXDP:
		return "xdp"
	case UplinkTC:
		return "tc"
	}
	return "auto"
}

// Options say which UEs the gNB carries, in which lab.
type Options struct {
	// Lab is the lab the gNB's n3 is in; the UE namespace is named after
	// it (Namespace).
	Lab topo.Lab
	// Sessions are the UEs, one each, as the SMF emulator established
	// them: UE i is Sessions[i]. Each needs an IPv4 UE address, an
	// uplink F-TEID with an IPv4 address, a downlink TEID no other has
	// and an IPv4 gNB address (the uplink's outer source).
	Sessions []smf.Session
	// Uplink chooses how the uplink leaves; UplinkAuto if zero.
	Uplink Uplink
}

// UE is one UE: a session and its addresses on ue0.
type UE struct {
	Addr    netip.Addr // the session's IPv4 address
	AddrV6  netip.Addr // ::1 in the session's /64; zero without one
	Session smf.Session
}

// GNB is a gNB carrying its UEs. Its methods are not safe for concurrent
// use, but Counters, Cost, Command and Dial.
type GNB struct {
	lab    topo.Lab
	ns     string // the UE namespace
	ues    []UE
	uplink Uplink
	objs   gnbObjects
	ueLink link.Link // xdp_gnb_ue on ue0
	att    *attachment
	direct bool
	closed bool
}

// Namespace is the UE namespace of the lab called lab, which topo.Down
// removes with the lab.
func Namespace(lab string) string { return topo.NamesOf(lab).UE }

// New builds the UE namespace of o.Lab with the sessions' UEs and loads
// the programs with their tables, not yet attached (Attach). A UE
// namespace left by a run that did not end is removed first.
func New(o Options) (*GNB, error) {
	ues, err := uesOf(o.Sessions)
	if err != nil {
		return nil, err
	}
	g := &GNB{lab: o.Lab, ns: Namespace(o.Lab.Name), ues: ues, uplink: o.Uplink}
	if err := Down(o.Lab.Name); err != nil {
		return nil, err
	}
	if err := g.build(); err != nil {
		return nil, errors.Join(err, g.Close())
	}
	if err := g.load(); err != nil {
		return nil, errors.Join(err, g.Close())
	}
	return g, nil
}

// Down removes the UE namespace of the lab called lab and the gNB's
// device in its gNB namespace, whatever state they are in; there being
// none is no error.
func Down(lab string) error {
	var errs []error
	ns := Namespace(lab)
	if _, err := os.Stat(filepath.Join(netns.Dir, ns)); err == nil {
		_, err := topo.IP("netns", "del", ns) // ue0 goes with it, and gnbue, its peer
		errs = append(errs, err)
	}
	gnbNS := topo.NamesOf(lab).GNB
	if _, err := os.Stat(filepath.Join(netns.Dir, gnbNS)); err == nil {
		if netns.Do(gnbNS, func() error { _, err := net.InterfaceByName(DevGNBUE); return err }) == nil {
			_, err := topo.IP("-n", gnbNS, "link", "del", DevGNBUE)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close detaches and unloads the programs, and removes the UE namespace
// and the direct link, leaving the lab as it was. Closing again does
// nothing.
func (g *GNB) Close() error {
	if g.closed {
		return nil
	}
	g.closed = true
	errs := []error{g.Detach()}
	if g.ueLink != nil {
		errs = append(errs, g.ueLink.Close())
		g.ueLink = nil
	}
	errs = append(errs, g.objs.Close(), g.removeDirect(), Down(g.lab.Name))
	return errors.Join(errs...)
}

// UEs are the UEs, in the order of Options.Sessions.
func (g *GNB) UEs() []UE { return g.ues }

// Namespace is the UE namespace.
func (g *GNB) Namespace() string { return g.ns }

// uesOf checks the sessions and gives each its addresses.
func uesOf(sessions []smf.Session) ([]UE, error) {
	if len(sessions) == 0 {
		return nil, errors.New("gnb: no sessions")
	}
	ues := make([]UE, len(sessions))
	byTEID := make(map[uint32]int, len(sessions))
	byAddr := make(map[netip.Addr]int, len(sessions))
	for i, s := range sessions {
		switch {
		case !s.UE.Is4():
			return nil, fmt.Errorf("gnb: session %d: UE address %v: want IPv4", i, s.UE)
		case s.UEv6.IsValid() && (!s.UEv6.Addr().Is6() || s.UEv6.Bits() != 64):
			return nil, fmt.Errorf("gnb: session %d: UE prefix %v: want an IPv6 /64", i, s.UEv6)
		case !s.UplinkAddr.Is4() || s.UplinkTEID == 0:
			return nil, fmt.Errorf("gnb: session %d: uplink F-TEID %#x at %v: want a TEID at an IPv4 address", i, s.UplinkTEID, s.UplinkAddr)
		case !s.GNB.Is4():
			return nil, fmt.Errorf("gnb: session %d: gNB address %v: want IPv4", i, s.GNB)
		}
		if j, dup := byTEID[s.DownlinkTEID]; dup {
			return nil, fmt.Errorf("gnb: sessions %d and %d: the same downlink TEID %#x", j, i, s.DownlinkTEID)
		}
		if j, dup := byAddr[s.UE]; dup {
			return nil, fmt.Errorf("gnb: sessions %d and %d: the same UE address %v", j, i, s.UE)
		}
		byTEID[s.DownlinkTEID], byAddr[s.UE] = i, i
		ues[i] = UE{Addr: s.UE, Session: s}
		if s.UEv6.IsValid() {
			a := s.UEv6.Masked().Addr().As16()
			a[15] = 1
			ues[i].AddrV6 = netip.AddrFrom16(a)
		}
	}
	return ues, nil
}

func mustMAC(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}
