package datapath

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf/link"
)

// XDPMode selects how the programs are attached.
type XDPMode string

const (
	Native  XDPMode = "native"  // in the driver: the fast one
	Generic XDPMode = "generic" // in the stack: works everywhere, slowly
)

// Attach puts each role's program on its interface. The kernel's FIB
// answers XDP lookups only where forwarding is on, so it is switched on for
// these interfaces.
func (d *Datapath) Attach(mode XDPMode) error {
	flags := link.XDPDriverMode
	switch mode {
	case Native, "":
	case Generic:
		flags = link.XDPGenericMode
	default:
		return fmt.Errorf("datapath: xdp mode %q: want native or generic", mode)
	}
	for role, dev := range d.ifaces {
		if err := enableForwarding(dev.Name); err != nil {
			return errors.Join(err, d.Detach())
		}
		l, err := link.AttachXDP(link.XDPOptions{Program: d.Program(role), Interface: dev.Index, Flags: flags})
		if err != nil {
			return errors.Join(fmt.Errorf("datapath: attach %s to %s (%s mode): %w", role, dev.Name, mode, err), d.Detach())
		}
		d.links = append(d.links, l)
	}
	return nil
}

// Detach removes the programs from the interfaces.
func (d *Datapath) Detach() error {
	var errs []error
	for _, l := range d.links {
		errs = append(errs, l.Close())
	}
	d.links = nil
	return errors.Join(errs...)
}

func enableForwarding(dev string) error {
	for _, p := range []string{
		"/proc/sys/net/ipv4/conf/" + dev + "/forwarding",
		"/proc/sys/net/ipv6/conf/" + dev + "/forwarding",
	} {
		if err := os.WriteFile(p, []byte("1"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("datapath: enable forwarding on %s: %w", dev, err)
		}
	}
	return nil
}
