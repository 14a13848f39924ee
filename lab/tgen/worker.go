package tgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/netns"
)

// workerCPUs are the CPUs asked for, or all this process may use, no more than flows.
func workerCPUs(cpus []int, flows int) ([]int, error) {
	if cpus == nil {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return nil, fmt.Errorf("tgen: cpus: %w", err)
		}
		for c := range 1024 {
			if set.IsSet(c) {
				cpus = append(cpus, c)
			}
		}
	}
	if len(cpus) == 0 {
		return nil, errors.New("tgen: no CPUs")
	}
	return cpus[:min(len(cpus), flows)], nil
}

// setWorkers gives each worker its flows and limits, and stops the rest.
func (g *Generator) setWorkers(cpus []int, o RunOptions) error {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	states := make([]tgenTgenWorker, n) // a CPU without a worker has limit 0: it sends nothing
	for i, cpu := range cpus {
		if cpu >= n {
			return fmt.Errorf("tgen: no cpu %d", cpu)
		}
		s := &states[cpu]
		s.Limit = o.Count
		if o.Count == 0 {
			s.Limit = math.MaxUint64
		}
		if o.Rate > 0 {
			s.Interval = uint64(time.Second) / o.Rate
		}
		flows := g.spec.FlowCount()
		s.First, s.End = uint32(i*flows/len(cpus)), uint32((i+1)*flows/len(cpus))
		s.Flow = s.First
	}
	return g.objs.Workers.Put(uint32(0), states)
}

func (g *Generator) workers() ([]tgenTgenWorker, error) {
	var states []tgenTgenWorker
	err := g.objs.Workers.Lookup(uint32(0), &states)
	return states, err
}

func (g *Generator) sentBy(cpu int) (uint64, error) {
	states, err := g.workers()
	if err != nil {
		return 0, err
	}
	return states[cpu].Sent, nil
}

// supervise waits for the workers, stopping them when ctx is done or, at
// a set rate, when their count is reached: the program drops what comes
// after, and the call would go on until interrupted. A stopped worker is
// signalled again each tick, as a signal that came between two calls
// interrupted nothing.
func (g *Generator) supervise(ctx context.Context, o RunOptions, workers []*worker) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	paced := o.Rate > 0 && o.Count > 0
	for {
		var states []tgenTgenWorker
		if paced {
			states, _ = g.workers()
		}
		running := 0
		for _, w := range workers {
			select {
			case <-w.done:
				continue
			default:
			}
			running++
			counted := states != nil && states[w.cpu].Sent >= o.Count
			if ctx.Err() != nil || counted || w.halted.Load() {
				w.stop()
			}
		}
		if running == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
}

// worker is one long BPF_PROG_RUN on one CPU.
type worker struct {
	cpu    int
	tid    atomic.Int32 // its thread, once pinned
	halted atomic.Bool
	done   chan struct{}
	// cpuTime is its thread's CPU time in the run, once done: the
	// softirq its frames raised on its core included (coretime.go).
	cpuTime time.Duration
}

// stop asks the worker to end and interrupts its call: a signal pending on
// its thread makes BPF_PROG_RUN return EINTR (bpf_test_timer_continue).
// SIGURG is the Go runtime's own preemption signal, harmless to it.
func (w *worker) stop() {
	w.halted.Store(true)
	if tid := w.tid.Load(); tid != 0 {
		unix.Tgkill(unix.Getpid(), int(tid), unix.SIGURG)
	}
}

// run calls the program until the worker's count is reached or it is
// stopped. Its thread stays locked: when the goroutine ends Go retires the
// thread, and the CPU affinity goes with it.
func (w *worker) run(g *Generator, o RunOptions, ifindex int) error {
	runtime.LockOSThread()
	return netns.Do(o.Namespace, func() error {
		var set unix.CPUSet
		set.Set(w.cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("pin to cpu %d: %w", w.cpu, err)
		}
		w.tid.Store(int32(unix.Gettid()))
		start := threadTime()
		defer func() { w.cpuTime = threadTime() - start }()
		counted := o.Rate == 0 && o.Count > 0 // the call ends with the count
		for !w.halted.Load() {
			repeat := uint32(math.MaxUint32)
			if counted {
				sent, err := g.sentBy(w.cpu)
				if err != nil {
					return err
				}
				if sent >= o.Count {
					return nil
				}
				repeat = uint32(min(o.Count-sent, math.MaxUint32))
			}
			err := progRun(g.objs.XdpTgen, g.frame, ifindex, repeat)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return fmt.Errorf("cpu %d: %w", w.cpu, err)
			}
			if sent, _ := g.sentBy(w.cpu); counted && sent < o.Count {
				return fmt.Errorf("cpu %d: the program sent %d of %d frames", w.cpu, sent, o.Count)
			}
		}
		return nil
	})
}

// progRun is BPF_PROG_RUN in live-frame mode, by hand: ebpf.Program.Run
// restarts on EINTR, and EINTR is how a worker is stopped.
func progRun(prog *ebpf.Program, frame []byte, ifindex int, repeat uint32) error {
	ctx := xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(ifindex)}
	attr := progRunAttr{
		progFD:  uint32(prog.FD()),
		sizeIn:  uint32(len(frame)),
		dataIn:  uint64(uintptr(unsafe.Pointer(&frame[0]))),
		repeat:  repeat,
		ctxSize: uint32(unsafe.Sizeof(ctx)),
		ctxIn:   uint64(uintptr(unsafe.Pointer(&ctx))),
		flags:   unix.BPF_F_TEST_XDP_LIVE_FRAMES,
		// As TGEN_BATCH: flat out, the program reads the clock once a batch.
		batchSize: 64,
	}
	err := progTestRun(&attr)
	runtime.KeepAlive(frame)
	runtime.KeepAlive(&ctx)
	return err
}
