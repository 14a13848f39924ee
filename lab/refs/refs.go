// Package refs holds the references every UPF figure is also given as a
// ratio to, measured in the same run. The Forwarder is the least an XDP
// program can do to move frames between two ports (rewrite both MACs,
// redirect through a devmap): the ceiling of this machine's path. The
// Minimal UPF is the least work any UPF must do for the same frames (find
// the session, count, decapsulate or encapsulate, then as the Forwarder):
// the floor of a UPF's cost.
package refs

import (
	"errors"
	"fmt"
	"net"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Port is a device and the MAC of the neighbour behind it.
type Port struct {
	Name string
	Peer net.HardwareAddr
}

// Forwarder moves frames from each port to the other.
type Forwarder struct {
	objs  refObjects
	ports [2]*net.Interface
	links []link.Link
}

// Load prepares a forwarder between a and b, devices of the current
// network namespace.
func Load(a, b Port) (*Forwarder, error) {
	spec, err := loadRef()
	if err != nil {
		return nil, err
	}
	f := &Forwarder{}
	var cfg [2]refRefPort
	for i, p := range []Port{a, b} {
		ifc, err := net.InterfaceByName(p.Name)
		if err != nil {
			return nil, fmt.Errorf("refs: port %s: %w", p.Name, err)
		}
		f.ports[i] = ifc
	}
	// A frame in on port i leaves on port 1-i: cfg[0] describes where
	// frames from port 0 go, and so on.
	for i, p := range []Port{b, a} {
		out := f.ports[1-i]
		cfg[i].Ifindex = uint32(out.Index)
		copy(cfg[i].Smac[:], out.HardwareAddr)
		copy(cfg[i].Peer[:], p.Peer)
	}
	if err := spec.Variables["cfg_ports"].Set(cfg); err != nil {
		return nil, fmt.Errorf("refs: set ports: %w", err)
	}
	if err := spec.LoadAndAssign(&f.objs, nil); err != nil {
		return nil, fmt.Errorf("refs: load: %w", err)
	}
	for _, ifc := range f.ports {
		if err := f.objs.RefTx.Put(uint32(ifc.Index), uint32(ifc.Index)); err != nil {
			f.Close()
			return nil, fmt.Errorf("refs: add %s to the devmap: %w", ifc.Name, err)
		}
	}
	return f, nil
}

// Program is the forwarder's XDP program.
func (f *Forwarder) Program() *ebpf.Program { return f.objs.XdpRef }

// Attach puts the forwarder on both ports in native mode.
func (f *Forwarder) Attach() error {
	for _, ifc := range f.ports {
		l, err := link.AttachXDP(link.XDPOptions{Program: f.objs.XdpRef, Interface: ifc.Index, Flags: link.XDPDriverMode})
		if err != nil {
			return errors.Join(fmt.Errorf("refs: attach to %s: %w", ifc.Name, err), f.Detach())
		}
		f.links = append(f.links, l)
	}
	return nil
}

// Detach removes the forwarder from the ports.
func (f *Forwarder) Detach() error {
	var errs []error
	for _, l := range f.links {
		errs = append(errs, l.Close())
	}
	f.links = nil
	return errors.Join(errs...)
}

// Close detaches and releases the forwarder.
func (f *Forwarder) Close() error { return errors.Join(f.Detach(), f.objs.Close()) }
