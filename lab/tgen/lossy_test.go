package tgen

import (
	"net"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/sluice-upf/sluice/internal/netns"
)

// The test forwarder (bpf/lab/lossy.bpf.c), built into the tests only.
//go:generate go tool bpf2go -cc clang-19 -cflags "-O2 -mcpu=v3 -g -Wall -Werror -fno-strict-aliasing -nostdinc -I../../bpf/include" -target bpfel lossy ../../bpf/lab/lossy.bpf.c

// What the test forwarder does to a frame (enum lossy_what).
const (
	lose  = 1
	twice = 2
	reseq = 3
)

// fault is one frame of a flow to lose, send twice, or send renumbered.
type fault struct {
	flow uint32
	seq  uint64
	what uint32
	to   uint64 // reseq: the sequence number it arrives with
}

// attachLossy forwards frames arriving on in out of out, in namespace ns,
// with faults, for the rest of the test.
func attachLossy(t *testing.T, ns, in, out string, faults []fault) {
	t.Helper()
	err := netns.Do(ns, func() error {
		src, err := net.InterfaceByName(in)
		if err != nil {
			return err
		}
		dst, err := net.InterfaceByName(out)
		if err != nil {
			return err
		}
		spec, err := loadLossy()
		if err != nil {
			return err
		}
		if err := spec.Variables["cfg_out"].Set(uint32(dst.Index)); err != nil {
			return err
		}
		var objs lossyObjects
		if err := spec.LoadAndAssign(&objs, nil); err != nil {
			return err
		}
		t.Cleanup(func() { objs.Close() })
		for _, f := range faults {
			k := lossyLossyKey{Flow: f.flow, Seq: f.seq}
			if err := objs.Acts.Put(k, lossyLossyAct{What: f.what, Seq: f.to}); err != nil {
				return err
			}
		}
		l, err := link.AttachTCX(link.TCXOptions{Interface: src.Index, Program: objs.TcLossy, Attach: ebpf.AttachTCXIngress})
		if err != nil {
			return err
		}
		t.Cleanup(func() { l.Close() })
		return nil
	})
	if err != nil {
		t.Fatalf("test forwarder from %s to %s: %v", in, out, err)
	}
}
