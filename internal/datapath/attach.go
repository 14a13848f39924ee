package datapath

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// XDPMode selects how the programs are attached.
type XDPMode string

const (
	Native  XDPMode = "native"  // in the driver: the fast one
	Generic XDPMode = "generic" // in the stack: works everywhere, slowly
)

// Attach puts each role's program on its interface. The kernel's FIB
// answers XDP lookups only where forwarding is on, so it is switched on for
// these interfaces. With pinning, a link pinned by an earlier run is given
// the new program in place: the interface is never without one.
func (d *Datapath) Attach(mode XDPMode) error {
	if !d.programsLoaded() {
		return errors.New("datapath: attach: the programs are not loaded (LoadPrograms)")
	}
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
		if mtu, ok := d.mtus[role]; ok && mtu != dev.MTU {
			if err := setMTU(dev.Name, mtu); err != nil {
				return errors.Join(err, d.Detach())
			}
		}
		l, err := d.attachOne(role, dev, flags)
		if err != nil {
			return errors.Join(fmt.Errorf("datapath: attach %s to %s (%s mode): %w", role, dev.Name, mode, err), d.Detach())
		}
		d.links = append(d.links, l)
	}
	return nil
}

func (d *Datapath) attachOne(role Role, dev *net.Interface, flags link.XDPAttachFlags) (link.Link, error) {
	if d.pinPath == "" {
		return link.AttachXDP(link.XDPOptions{Program: d.Program(role), Interface: dev.Index, Flags: flags})
	}
	path := d.linkPin(role)
	if l, err := link.LoadPinnedLink(path, nil); err == nil {
		err := l.Update(d.Program(role))
		if err == nil {
			return l, nil
		}
		// The device the link was on is gone (re-created since): the pin
		// holds nothing that forwards, so it goes, and the program is
		// attached afresh below.
		severed := errors.Is(err, unix.ENOLINK)
		if severed {
			err = l.Unpin()
		}
		l.Close()
		if !severed || err != nil {
			return nil, fmt.Errorf("replace the program in %s: %w", path, err)
		}
	}
	l, err := link.AttachXDP(link.XDPOptions{Program: d.Program(role), Interface: dev.Index, Flags: flags})
	if err != nil {
		return nil, err
	}
	if err := l.Pin(path); err != nil {
		l.Close()
		return nil, fmt.Errorf("pin the link: %w", err)
	}
	return l, nil
}

func (d *Datapath) linkPin(r Role) string { return filepath.Join(d.pinPath, "link_"+r.String()) }

// Unpin removes the pinned links and maps: the programs are detached once
// nothing else holds them, and the next Load starts afresh.
func (d *Datapath) Unpin() error {
	if d.pinPath == "" {
		return nil
	}
	var errs []error
	for _, l := range d.links {
		errs = append(errs, l.Unpin())
	}
	for role := range d.ifaces {
		if err := os.Remove(d.linkPin(role)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, name := range d.pinnedMaps {
		if err := os.Remove(filepath.Join(d.pinPath, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Detach removes the programs from the interfaces (and their pins).
func (d *Datapath) Detach() error {
	var errs []error
	for _, l := range d.links {
		if d.pinPath != "" {
			errs = append(errs, l.Unpin())
		}
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
		if on, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(on)) == "1" {
			continue // already on: no write, which a read-only /proc/sys (a container's) would refuse
		}
		if err := os.WriteFile(p, []byte("1"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("datapath: enable forwarding on %s: %w", dev, err)
		}
	}
	return nil
}

// setMTU sets a device's MTU, before a program is attached: native XDP
// may refuse a larger one after.
func setMTU(dev string, mtu int) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("datapath: set the MTU of %s: %w", dev, err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(dev)
	if err == nil {
		ifr.SetUint32(uint32(mtu))
		err = unix.IoctlIfreq(fd, unix.SIOCSIFMTU, ifr)
	}
	if err != nil {
		return fmt.Errorf("datapath: set the MTU of %s to %d: %w", dev, mtu, err)
	}
	return nil
}
