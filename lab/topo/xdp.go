package topo

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// AttachPass puts an XDP program that passes every frame on dev in ns,
// one of the lab's namespaces, until the returned Closer is closed. It is
// for the far ends of the UPF's links when nothing else is on them: a veth
// drops the frames an XDP program redirects into it unless its peer has an
// XDP program (which gives it NAPI). A device that has a program already
// is left alone, and closing does nothing.
func (l Lab) AttachPass(ns, dev string) (io.Closer, error) {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "lab_pass",
		Type:         ebpf.XDP,
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 2 /* XDP_PASS */), asm.Return()},
	})
	if err != nil {
		return nil, fmt.Errorf("topo: load a passing XDP program: %w", err)
	}
	defer prog.Close() // the attachment holds its own reference
	var attached io.Closer = nopCloser{}
	err = l.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		k, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifc.Index})
		if errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EEXIST) {
			return nil // a program is there: it gives the device NAPI as well
		}
		if err == nil {
			attached = k
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("topo: attach a passing XDP program to %s/%s: %w", ns, dev, err)
	}
	return attached, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
