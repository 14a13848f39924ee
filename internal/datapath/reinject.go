package datapath

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// xdpMD is struct xdp_md, BPF_PROG_RUN's context for XDP.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// Reinject runs a downlink frame that user space held (FAR BUFF) through
// the N6 program again, as if it arrived now: the program looks the
// session up, counts, polices and encapsulates it. What it redirects goes
// out of the N3 device; anything else is dropped, counted by the program.
// Call it from the datapath's network namespace.
func (d *Datapath) Reinject(frame []byte) (Verdict, error) {
	in, out := d.ifaces[N6], d.ifaces[N3]
	if in == nil || out == nil {
		return Aborted, errors.New("reinject: the datapath has no n6 or no n3 device")
	}
	if !d.programsLoaded() {
		return Aborted, errors.New("reinject: the programs are not loaded yet")
	}
	// Encapsulation adds at most an outer IPv6, UDP and GTP-U with the PDU
	// Session Container.
	buf := make([]byte, len(frame)+128)
	opts := &ebpf.RunOptions{
		Data:    frame,
		DataOut: buf,
		Context: xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(in.Index)},
	}
	ret, err := d.objs.XdpN6.Run(opts)
	if err != nil {
		return Aborted, fmt.Errorf("reinject: run the n6 program: %w", err)
	}
	if Verdict(ret) != Redirected {
		return Verdict(ret), nil
	}
	if err := d.transmit(out.Index, opts.DataOut); err != nil {
		return Redirected, fmt.Errorf("reinject: send on %s: %w", out.Name, err)
	}
	return Redirected, nil
}

// transmit sends a whole frame out of a device through a packet socket.
func (d *Datapath) transmit(ifindex int, frame []byte) error {
	if d.txSocket == 0 {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0) // protocol 0: send only
		if err != nil {
			return err
		}
		d.txSocket = fd
	}
	return unix.Sendto(d.txSocket, frame, 0, &unix.SockaddrLinklayer{Ifindex: ifindex})
}
