package tgen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/cilium/ebpf"

	"github.com/sluice-upf/sluice/internal/netns"
)

// Generator sends the traffic of one Spec.
type Generator struct {
	spec  Spec
	objs  tgenObjects
	frame []byte     // the template at the largest size: BPF_PROG_RUN's data
	mu    sync.Mutex // one run at a time
}

const tmplWords = 16 // as TGEN_TMPL_WORDS

// New loads a generator for spec.
func New(spec Spec) (*Generator, error) {
	if err := spec.validate(); err != nil {
		return nil, fmt.Errorf("tgen: %w", err)
	}
	sizes, mix := spec.sizes()
	f := spec.frame(slices.Max(sizes))
	l := f.Layout()
	g := &Generator{spec: spec, frame: f.Bytes()}
	var tmpl [tmplWords]uint64
	words := (l.Payload + 7) / 8 // headers; the stamp is written whole
	for i := range words {
		tmpl[i] = binary.NativeEndian.Uint64(g.frame[8*i:])
	}
	var size [mixSizes]uint16
	for i, s := range sizes {
		size[i] = uint16(s)
	}
	var order [mixSlots]uint8
	copy(order[:], mix)
	outer := uint8(0)
	if f.Tunnel != nil {
		outer = ipVersion(spec.GNB.Is4())
	}
	cs, err := loadTgen()
	if err != nil {
		return nil, err
	}
	cs.Maps["sessions"].MaxEntries = uint32(len(spec.Sessions))
	cs.Maps["flows"].MaxEntries = uint32(spec.FlowCount())
	err = setVariables(cs, map[string]any{
		"cfg_tmpl":       tmpl,
		"cfg_tmpl_words": uint32(words),
		"cfg_outer":      outer,
		"cfg_inner":      ipVersion(spec.Sessions[0].UE.Is4()),
		"cfg_inner_off":  uint16(l.Inner),
		"cfg_stamp_off":  uint16(l.Payload),
		"cfg_size":       size,
		"cfg_mix":        order,
		"cfg_mix_len":    uint32(len(mix)),
	})
	if err != nil {
		return nil, fmt.Errorf("tgen: %w", err)
	}
	if err := cs.LoadAndAssign(&g.objs, nil); err != nil {
		return nil, fmt.Errorf("tgen: load: %w", err)
	}
	keys, vals := spec.sessionTable()
	if err := errors.Join(putAll(g.objs.Sessions, keys, vals), g.Reset()); err != nil {
		g.objs.Close()
		return nil, fmt.Errorf("tgen: sessions: %w", err)
	}
	return g, nil
}

func ipVersion(is4 bool) uint8 {
	if is4 {
		return 4
	}
	return 6
}

// Close releases the generator.
func (g *Generator) Close() error { return g.objs.Close() }

// Program is the generator's XDP program, for its run-time statistics.
func (g *Generator) Program() *ebpf.Program { return g.objs.XdpTgen }

// RunOptions say where and how much to send.
type RunOptions struct {
	Namespace, Device string // frames leave through Device, in Namespace
	// CPUs: one worker on each; nil means every CPU this process may use.
	// There are never more workers than flows.
	CPUs  []int
	Count uint64 // frames per worker; 0 sends until ctx is done
	Rate  uint64 // frames per second per worker; 0 sends flat out
}

// Result is what a run sent.
type Result struct {
	Sent  []uint64 // frames per worker, in the order of the CPUs
	Bytes uint64   // their inner IP bytes
	Took  time.Duration
	// CoreTime is the CPU time the workers' cores gave the run: their
	// threads, with the softirq their frames raised there, and the cores'
	// ksoftirqd (coretime.go). With one worker sending flat out, the
	// frames cross the whole path on its core: the path's cost, without
	// the time other processes took the core meanwhile.
	CoreTime time.Duration
	// NotTaken is how many frames the device could not pass on (a veth
	// counts them in its tx_queue_N_xdp_xmit_errors): sent, but lost
	// before reaching anything.
	NotTaken uint64
}

// Total is the frames sent by all workers.
func (r Result) Total() uint64 { return sum(r.Sent) }

func sum(counts []uint64) uint64 {
	var n uint64
	for _, c := range counts {
		n += c
	}
	return n
}

// Run sends until every worker has sent Count frames or ctx is done,
// whichever comes first. Run without a Count needs a ctx that ends.
//
// Each worker owns a contiguous share of the flows, so that every flow's
// sequence numbers come from one CPU. Sequences continue from one run to
// the next until Reset.
func (g *Generator) Run(ctx context.Context, o RunOptions) (Result, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if o.Count == 0 && ctx.Done() == nil {
		return Result{}, errors.New("tgen: a run needs a count or a context that ends")
	}
	cpus, err := workerCPUs(o.CPUs, g.spec.FlowCount())
	if err != nil {
		return Result{}, err
	}
	ifindex, err := g.device(o)
	if err != nil {
		return Result{}, err
	}
	if err := g.setWorkers(cpus, o); err != nil {
		return Result{}, err
	}
	before, _ := XmitErrors(o.Namespace, o.Device)
	softirqd := softirqThreads(cpus)
	softirqBefore, serr := threadsTime(softirqd)

	workers := make([]*worker, len(cpus))
	errs := make(chan error, len(cpus))
	start := time.Now()
	for i, cpu := range cpus {
		w := &worker{cpu: cpu, done: make(chan struct{})}
		workers[i] = w
		go func() {
			defer close(w.done)
			errs <- w.run(g, o, ifindex)
		}()
	}
	g.supervise(ctx, o, workers)
	took := time.Since(start)
	for range workers {
		err = errors.Join(err, <-errs)
	}

	res := Result{Took: took}
	for _, w := range workers {
		res.CoreTime += w.cpuTime
	}
	if softirqAfter, err := threadsTime(softirqd); serr == nil && err == nil {
		res.CoreTime += softirqAfter - softirqBefore
	}
	states, lerr := g.workers()
	for _, cpu := range cpus {
		if lerr == nil {
			res.Sent = append(res.Sent, states[cpu].Sent)
			res.Bytes += states[cpu].Bytes
		}
	}
	if after, xerr := XmitErrors(o.Namespace, o.Device); xerr == nil {
		res.NotTaken = after - before
	}
	if err = errors.Join(err, lerr); err != nil {
		return res, fmt.Errorf("tgen: send out of %s: %w", o.Device, err)
	}
	return res, nil
}

// device is the sending device's index; its MTU must take the largest frame.
func (g *Generator) device(o RunOptions) (int, error) {
	var ifc *net.Interface
	err := netns.Do(o.Namespace, func() (err error) {
		ifc, err = net.InterfaceByName(o.Device)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("tgen: %w", err)
	}
	if l3 := len(g.frame) - 14; l3 > ifc.MTU {
		return 0, fmt.Errorf("tgen: %d-byte packets do not fit %s's MTU of %d", l3, o.Device, ifc.MTU)
	}
	return ifc.Index, nil
}

// Sent is how many frames each flow has been sent since New or Reset: what
// the sink counts loss against.
func (g *Generator) Sent() ([]uint64, error) {
	n := g.spec.FlowCount()
	keys, vals := make([]uint32, n), make([]tgenTgenFlow, n)
	var cursor ebpf.MapBatchCursor
	if _, err := g.objs.Flows.BatchLookup(&cursor, keys, vals, nil); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return nil, fmt.Errorf("tgen: sent: %w", err)
	}
	sent := make([]uint64, n)
	for i, v := range vals {
		sent[i] = v.Seq
	}
	return sent, nil
}

// Reset starts every flow's sequence numbers from 0 again, once a run in
// progress has ended.
func (g *Generator) Reset() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	keys, at := g.spec.flowTable()
	vals := make([]tgenTgenFlow, len(keys))
	for i := range vals {
		vals[i].At = at[i]
	}
	return putAll(g.objs.Flows, keys, vals)
}
