package gnb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/lab/topo"
)

// load loads the programs for the gNB's n3 and gnbue with the sessions in
// their tables, and puts xdp_gnb_ue on ue0.
func (g *GNB) load() (err error) {
	if err := g.loadObjects(); err != nil {
		return err
	}
	if g.ueLink, err = attachXDP(g.ns, DevUE, g.objs.XdpGnbUe); err != nil {
		return err
	}
	// Older kernels turn GRO on with XDP on a veth; the UEs' stacks take
	// packets one by one, as the DN's and the direct link's do.
	return setOffloads(g.ns, DevUE, "gro", "off")
}

// loadObjects loads the programs with the sessions in their tables; the
// gNB's namespace has n3, with a neighbour entry for the UPF, and gnbue.
func (g *GNB) loadObjects() error {
	var n3, gnbue *net.Interface
	err := netns.Do(g.lab.GNB, func() (err error) {
		if n3, err = net.InterfaceByName(topo.DevN3); err != nil {
			return err
		}
		gnbue, err = net.InterfaceByName(DevGNBUE)
		return err
	})
	if err != nil {
		return fmt.Errorf("gnb: %w", err)
	}
	// One UPF, one n3: the MAC of the first session's is every session's.
	upf, err := neighbour(g.lab.GNB, topo.DevN3, g.ues[0].Session.UplinkAddr)
	if err != nil {
		return fmt.Errorf("gnb: the UPF's MAC: %w", err)
	}
	spec, err := loadGnb()
	if err != nil {
		return err
	}
	n := uint32(len(g.ues))
	for _, m := range []string{"gnb_ul4", "gnb_ul6", "gnb_dl", "gnb_ues"} {
		spec.Maps[m].MaxEntries = n
	}
	ports := map[string]gnbGnbPort{"cfg_n3": port(n3, upf), "cfg_ue": port(gnbue, MACUE)}
	for name, p := range ports {
		if err := spec.Variables[name].Set(p); err != nil {
			return fmt.Errorf("gnb: set %s: %w", name, err)
		}
	}
	if err := spec.LoadAndAssign(&g.objs, nil); err != nil {
		return fmt.Errorf("gnb: load: %w", err)
	}
	// A devmap takes devices of the namespace it is written from.
	err = netns.Do(g.lab.GNB, func() error {
		for _, ifc := range []*net.Interface{n3, gnbue} {
			if err := g.objs.GnbTx.Put(uint32(ifc.Index), uint32(ifc.Index)); err != nil {
				return fmt.Errorf("add %s to the devmap: %w", ifc.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("gnb: %w", err)
	}
	return g.fill()
}

func port(ifc *net.Interface, peer net.HardwareAddr) gnbGnbPort {
	p := gnbGnbPort{Ifindex: uint32(ifc.Index)}
	copy(p.Smac[:], ifc.HardwareAddr)
	copy(p.Peer[:], peer)
	return p
}

// fill writes every UE into the tables: uplink by IPv4 address and IPv6
// /64, downlink by TEID. Keys and values hold addresses and TEIDs as on
// the wire.
func (g *GNB) fill() error {
	var (
		ul4Keys [][4]byte
		ul6Keys [][8]byte
		ul4     []gnbGnbUl
		ul6     []gnbGnbUl
		dlKeys  []uint32
		dl      []gnbGnbDl
	)
	for i, u := range g.ues {
		s := u.Session
		v := gnbGnbUl{Id: uint32(i), Teid: wire32(s.UplinkTEID), Upf: addr32(s.UplinkAddr.As4()), Gnb: addr32(s.GNB.As4()), Qfi: s.QFI}
		ul4Keys, ul4 = append(ul4Keys, s.UE.As4()), append(ul4, v)
		if u.AddrV6.IsValid() {
			a := u.AddrV6.As16()
			ul6Keys, ul6 = append(ul6Keys, [8]byte(a[:8])), append(ul6, v)
		}
		dlKeys, dl = append(dlKeys, wire32(s.DownlinkTEID)), append(dl, gnbGnbDl{Id: uint32(i)})
	}
	for _, t := range []struct {
		name       string
		m          *ebpf.Map
		keys, vals any
		n          int
	}{
		{"uplink IPv4", g.objs.GnbUl4, ul4Keys, ul4, len(ul4)},
		{"uplink IPv6", g.objs.GnbUl6, ul6Keys, ul6, len(ul6)},
		{"downlink", g.objs.GnbDl, dlKeys, dl, len(dl)},
	} {
		if t.n == 0 {
			continue
		}
		if _, err := t.m.BatchUpdate(t.keys, t.vals, nil); err != nil {
			return fmt.Errorf("gnb: %s table: %w", t.name, err)
		}
	}
	return nil
}

// attachment is what Attach put on the devices, and what it changed.
type attachment struct {
	links   []link.Link
	dnPass  io.Closer
	dnTxOn  bool        // the DN's n6 had TX checksum offload on before
	dnGROOn bool        // and GRO (topo up turns it on)
	qdiscs  [][2]string // namespace and device Attach gave a qdisc
	uplink  Uplink
}

// Attach puts the downlink program on the gNB's n3 and the uplink one on
// gnbue, as Options.Uplink says. The gNB's n3 must have no XDP program:
// take the generator's sink or a passing program off first.
//
// For the DN's sake it also turns TX checksum offload off on the DN's n6
// and, unless one is there, puts a passing XDP program on it: the DN's own
// packets (an iperf3 or web server's) cross an XDP UPF as their bytes are,
// so they must carry their checksums; and frames an XDP UPF redirects into
// its n6 reach the DN only if the DN's end has NAPI. The DN's n6 and the
// gNB's n3 (which the TC uplink sends from) get a qdisc where they have
// none, so that their senders wait for a full ring rather than lose to it.
// Detach undoes all three.
func (g *GNB) Attach() (err error) {
	if g.att != nil {
		return nil
	}
	a := &attachment{uplink: g.uplink}
	g.att = a
	defer func() {
		if err != nil {
			err = errors.Join(err, g.Detach())
		}
	}()
	if a.uplink == UplinkAuto {
		if a.uplink, err = g.autoUplink(); err != nil {
			return err
		}
	}
	// TX checksums off (see ue.go); GRO off, as on the direct link, so
	// that the tunnel and the ceiling have the DN's stack alike.
	if a.dnTxOn, err = topo.OffloadOn(g.lab.DN, topo.DevN6, "tx-checksumming"); err != nil {
		return fmt.Errorf("gnb: %w", err)
	}
	if a.dnGROOn, err = topo.OffloadOn(g.lab.DN, topo.DevN6, "generic-receive-offload"); err != nil {
		return fmt.Errorf("gnb: %w", err)
	}
	if err := setOffloads(g.lab.DN, topo.DevN6, "tx", "off", "gro", "off"); err != nil {
		return fmt.Errorf("gnb: the DN's offloads: %w", err)
	}
	if a.dnPass, err = g.lab.AttachPass(g.lab.DN, topo.DevN6); err != nil {
		return err
	}
	for _, d := range [][2]string{{g.lab.DN, topo.DevN6}, {g.lab.GNB, topo.DevN3}} {
		has, err := hasQdisc(d[0], d[1])
		if err == nil && !has {
			err = setQdisc(d[0], d[1], true)
			a.qdiscs = append(a.qdiscs, d)
		}
		if err != nil {
			return fmt.Errorf("gnb: %w", err)
		}
	}
	dl, err := attachXDP(g.lab.GNB, topo.DevN3, g.objs.XdpGnbDl)
	if err != nil {
		return err
	}
	a.links = append(a.links, dl)
	var ul link.Link
	if a.uplink == UplinkXDP {
		ul, err = attachXDP(g.lab.GNB, DevGNBUE, g.objs.XdpGnbUl)
	} else {
		ul, err = attachTC(g.lab.GNB, DevGNBUE, g.objs.TcGnbUl)
	}
	if err != nil {
		return err
	}
	a.links = append(a.links, ul)
	return nil
}

// Detach takes the programs off the devices and gives the DN's n6 back
// its checksum offload, its GRO and its XDP program (none).
func (g *GNB) Detach() error {
	a := g.att
	if a == nil {
		return nil
	}
	g.att = nil
	var errs []error
	for _, l := range slices.Backward(a.links) {
		errs = append(errs, l.Close())
	}
	if a.dnPass != nil {
		errs = append(errs, a.dnPass.Close())
	}
	if a.dnTxOn {
		errs = append(errs, setOffloads(g.lab.DN, topo.DevN6, "tx", "on"))
	}
	if a.dnGROOn {
		errs = append(errs, setOffloads(g.lab.DN, topo.DevN6, "gro", "on"))
	}
	for _, d := range a.qdiscs {
		errs = append(errs, setQdisc(d[0], d[1], false))
	}
	return errors.Join(errs...)
}

// UplinkMode is how the uplink leaves while attached: UplinkXDP or
// UplinkTC (UplinkAuto resolved), or UplinkAuto when detached.
func (g *GNB) UplinkMode() Uplink {
	if g.att == nil {
		return UplinkAuto
	}
	return g.att.uplink
}

// autoUplink is UplinkXDP if the UPF's n3 has a native XDP program, which
// gives it NAPI, else UplinkTC.
func (g *GNB) autoUplink() (Uplink, error) {
	devs, err := topo.Show(g.lab.Name)
	if err != nil {
		return 0, err
	}
	for _, d := range devs {
		if d.Namespace == g.lab.UPF && d.Name == topo.DevN3 &&
			slices.ContainsFunc(d.XDP, func(p string) bool { return strings.HasSuffix(p, " native") }) {
			return UplinkXDP, nil
		}
	}
	return UplinkTC, nil
}

// attachXDP puts prog on dev in ns, in native mode.
func attachXDP(ns, dev string, prog *ebpf.Program) (l link.Link, err error) {
	err = netns.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		l, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifc.Index, Flags: link.XDPDriverMode})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gnb: attach %s to %s/%s (another XDP program there? the sink's, a passing one: take it off first): %w", progName(prog), ns, dev, err)
	}
	return l, nil
}

// attachTC puts prog at dev's TC ingress in ns.
func attachTC(ns, dev string, prog *ebpf.Program) (l link.Link, err error) {
	err = netns.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		l, err = link.AttachTCX(link.TCXOptions{Program: prog, Interface: ifc.Index, Attach: ebpf.AttachTCXIngress})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gnb: attach %s to the TC ingress of %s/%s: %w", progName(prog), ns, dev, err)
	}
	return l, nil
}

func progName(p *ebpf.Program) string {
	if info, err := p.Info(); err == nil {
		return info.Name
	}
	return "a program"
}

// wire32 is a number as the program keeps it: its bytes in network order.
func wire32(v uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return addr32(b)
}

// addr32 is the word whose bytes in memory are b.
func addr32(b [4]byte) uint32 { return binary.NativeEndian.Uint32(b[:]) }
