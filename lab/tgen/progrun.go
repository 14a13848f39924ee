package tgen

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// RunXDP runs prog once on a copy of frame as if it came in on ifindex
// (BPF_PROG_RUN, not live) and returns the kernel's time for the run.
// out, if not nil, gets the frame as the program left it. By hand, as
// cilium/ebpf's Benchmark takes no context, and the FIB needs the device.
func RunXDP(prog *ebpf.Program, frame, out []byte, ifindex int) (time.Duration, error) {
	ctx := xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(ifindex)}
	attr := progRunAttr{
		progFD:  uint32(prog.FD()),
		sizeIn:  uint32(len(frame)),
		dataIn:  uint64(uintptr(unsafe.Pointer(&frame[0]))),
		repeat:  1,
		ctxSize: uint32(unsafe.Sizeof(ctx)),
		ctxIn:   uint64(uintptr(unsafe.Pointer(&ctx))),
	}
	if len(out) > 0 {
		attr.sizeOut, attr.dataOut = uint32(len(out)), uint64(uintptr(unsafe.Pointer(&out[0])))
	}
	err := progTestRun(&attr)
	runtime.KeepAlive(frame)
	runtime.KeepAlive(out)
	runtime.KeepAlive(&ctx)
	return time.Duration(attr.duration), err
}

// progTestRun is the BPF_PROG_RUN command, by hand: ebpf.Program.Run
// restarts on EINTR, and EINTR is how a worker is stopped.
func progTestRun(attr *progRunAttr) error {
	if _, _, e := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_TEST_RUN, uintptr(unsafe.Pointer(attr)), unsafe.Sizeof(*attr)); e != 0 {
		return fmt.Errorf("BPF_PROG_RUN: %w", e)
	}
	return nil
}

// progRunAttr is the test member of union bpf_attr.
type progRunAttr struct {
	progFD, retval   uint32
	sizeIn, sizeOut  uint32
	dataIn, dataOut  uint64
	repeat, duration uint32
	ctxSize, ctxOut  uint32
	ctxIn, ctxOutPtr uint64
	flags, cpu       uint32
	batchSize, _     uint32
}

// xdpMD mirrors struct xdp_md, BPF_PROG_RUN's context.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}
