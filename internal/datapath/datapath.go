// Package datapath loads the XDP fast path, attaches it to the UPF's
// interfaces and is the only place that reads or writes its maps.
//
// Callers hand it rule entries (FAR, QER, URR, SDF, PDR lists, lookups)
// under IDs they allocate; Apply installs a batch make-before-break. Counters
// and events come back typed. Nothing here knows PFCP.
package datapath

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// Role is what an interface is to the UPF.
type Role uint8

const (
	N3 Role = Role(bpfUpfIfaceUPF_IF_N3) // GTP-U from gNBs
	N6 Role = Role(bpfUpfIfaceUPF_IF_N6) // IP to and from the data network
	N9 Role = Role(bpfUpfIfaceUPF_IF_N9) // GTP-U from other UPFs
)

func (r Role) String() string {
	switch r {
	case N3:
		return "n3"
	case N6:
		return "n6"
	case N9:
		return "n9"
	}
	return fmt.Sprintf("role(%d)", r)
}

// Interface names a device and its role.
type Interface struct {
	Name string
	Role Role
	MTU  int // set on the device by Attach; 0 leaves it as it is
}

// Options configure a datapath at load time.
type Options struct {
	Interfaces []Interface
	// GTPUAddrs are the local GTP-U endpoints; the index of an address is the
	// endpoint ID in UplinkKey. At most MaxGTPUEndpoints.
	GTPUAddrs []netip.Addr
	// MaxSessions sizes the session tables (see Sizes).
	MaxSessions int
	// EventInterval spaces the events about paths (unknown TEID, unresolved
	// neighbour, an extension header not understood) and the Echo replies
	// after a burst of 8, per CPU and kind; 0 means the default of 1 ms.
	EventInterval time.Duration
	// MBRBurst is how far ahead of its rate a QER may run; 0 means 200 ms,
	// TCP's shortest retransmission timeout (see bpf/lib/qer.h).
	MBRBurst time.Duration
	// PinPath, if set, is a bpffs directory where maps and links are pinned:
	// a later Load with the same path and sizes takes the sessions and
	// counters back, and its Attach replaces the programs without a gap.
	PinPath string
	// NextHopTTL is how long a next hop from the kernel FIB is reused before
	// asking again: route and neighbour changes show within it. 0 means
	// 50 ms, negative disables the cache.
	NextHopTTL time.Duration
	// Listeners are the host's sockets besides GTP-U that the data network
	// must never reach (upfd's PFCP, API, metrics): N6 traffic to their
	// ports is dropped at every address. At most MaxListeners.
	Listeners []Listener
	// NoFastPath sends every frame through the general pipeline, which the
	// fast path for the commonest G-PDUs (bpf/lib/lean.h) otherwise spares
	// them: to compare the two (FuzzDatapath), or to rule it out.
	NoFastPath bool
}

// Listener is a listening socket by transport and port.
type Listener struct {
	Network string // "tcp" or "udp"
	Port    uint16
}

// DefaultMBRBurst is the QERs' burst tolerance unless Options.MBRBurst
// sets one: TCP's shortest retransmission timeout in Linux. A TCP flow
// that overruns its MBR loses a window's worth and waits that long; a
// shallower bucket forfeits the allowance of the wait. Through upfd with
// 5 ms, one iperf3 TCP flow got 2-12 % of a 10 Mbit/s to 1 Gbit/s MBR;
// with 200 ms, 93-98 % (lab/gnb, 4 s each way).
const DefaultMBRBurst = 200 * time.Millisecond

// MaxListeners is how many listeners the datapath keeps N6 from.
const MaxListeners = 4

// MaxGTPUEndpoints is how many local GTP-U addresses the datapath tells apart.
const MaxGTPUEndpoints = 4

// MaxPDRs is the number of PDRs per session and direction.
const MaxPDRs = 32

// Sizes are the capacities of the datapath's tables.
type Sizes struct {
	Uplink, Downlink4, Downlink6 uint32 // lookup entries
	// ListSlots hold the PDR lists of lookups with more than one PDR,
	// two PDRs a slot: a list is a run of consecutive slots. Slot 0, then
	// whole runs of ListRun.
	ListSlots              uint32
	SDFs, FARs, QERs, URRs uint32 // slots; ID 0 is never used
}

// ListRun is the longest run of list slots a list takes: MaxPDRs, two a
// slot.
const ListRun = MaxPDRs / 2

// SizesFor gives table sizes for n sessions (at least 1024), so that n of
// the sessions the Open5GS, free5GC and OAI SMFs set up fit (see
// internal/pfcp/profiles_test.go): one PDR a direction, 2 FARs, 1-2 QERs,
// 1-2 URRs, and the UE's addresses as the uplink PDR's source filters. Only
// one plan is applied at a time, so make-before-break needs a few slots
// beyond, not a second set.
func SizesFor(n int) Sizes {
	n = max(n, 1024)
	u := uint32(n)
	return Sizes{
		// The lookup tables take memory for the entries they hold, and
		// for their buckets (16 bytes, as many as entries rounded up to a
		// power of two): room to spare costs little.
		//
		// Open5GS gives each session two F-TEIDs (the uplink's, and its
		// CP-to-UP PDR's); the others one.
		Uplink: 2 * u,
		// One IPv4 UE address each; a quarter spare.
		Downlink4: u + u/4,
		// One IPv6 prefix each, when any: the trie takes memory only for
		// the prefixes it holds.
		Downlink6: u + u/4,
		// Open5GS's uplink PDR of an IPv4v6 session is one PDR for each
		// UE address family: a list of 2, one slot. An eighth more for
		// longer lists (its Router Solicitation PDR, dedicated QoS flows).
		ListSlots: listSlots(u + u/8),
		// The UE's IPv4 address as the uplink source goes inline in the
		// PDR; Open5GS's IPv6 one takes a slot, free5GC and OAI need none.
		// An eighth more for dedicated flows.
		SDFs: u + u/8 + 1,
		// Two each (uplink, downlink), a quarter more for Open5GS's
		// CP-function FAR and for changed FARs, written before the old go.
		FARs: 2*u + u/4 + 1,
		// Two each in free5GC (the flow's QFI, the session AMBR) and OAI
		// (uplink, downlink); Open5GS one.
		QERs: 2*u + u/16 + 1,
		// Two each in free5GC (measured before and after QoS), one in
		// Open5GS and OAI.
		URRs: 2*u + u/16 + 1,
	}
}

// listSlots is a list table of at least n slots: slot 0, which names no
// list, and whole runs of ListRun.
func listSlots(n uint32) uint32 {
	return 1 + (n+ListRun-1)/ListRun*ListRun
}

// Datapath is a loaded XDP fast path.
type Datapath struct {
	objs bpfObjects
	// spec is the objects as set up for this datapath, for LoadPrograms;
	// loaded says it ran: the programs in objs may be read (Reinject runs
	// in another goroutine than the one that loads them).
	spec    *ebpf.CollectionSpec
	loaded  atomic.Bool
	sizes   Sizes
	ifaces  map[Role]*net.Interface
	mtus    map[Role]int // to set on the devices, where given
	links   []link.Link
	pinPath string
	// pinnedMaps are the names of the maps pinned under pinPath.
	pinnedMaps []string
	// reused: the maps were pinned by an earlier Load, which this one took
	// over with what they held.
	reused bool
	// txSocket sends re-injected frames; 0 until the first (fd 0 is stdin).
	txSocket int
	// usage are the URRs' usage records, mapped.
	usage *usageRecords
	// slots are the slot tables, mapped.
	slots slotTables
	// gtpuAddrs are the local GTP-U addresses, by endpoint index.
	gtpuAddrs []netip.Addr
}

// objects is where Load takes the eBPF objects from: the ones built into
// this binary. A variable so that the datapath bench can measure a trial
// build beside them in one run (SLUICE_BENCH_TRIAL).
var objects = loadBpf

// Load checks the options, sizes the maps and loads them and the
// programs. The interfaces must exist in the caller's network namespace.
// Nothing is attached yet.
func Load(opts Options) (*Datapath, error) {
	d, err := LoadMaps(opts)
	if err != nil {
		return nil, err
	}
	if err := d.LoadPrograms(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// LoadMaps is Load without the programs: everything N4 needs (the tables,
// the counters, the event ring) is there, and LoadPrograms comes later. A
// process taking pinned maps over serves N4 so while the kernel verifies
// its programs, the ones it replaces forwarding meanwhile.
func LoadMaps(opts Options) (*Datapath, error) {
	if len(opts.GTPUAddrs) > MaxGTPUEndpoints {
		return nil, fmt.Errorf("datapath: %d GTP-U addresses, at most %d", len(opts.GTPUAddrs), MaxGTPUEndpoints)
	}
	if len(opts.Listeners) > MaxListeners {
		return nil, fmt.Errorf("datapath: %d listeners, at most %d", len(opts.Listeners), MaxListeners)
	}
	ifaces := make(map[Role]*net.Interface)
	mtus := make(map[Role]int)
	for _, i := range opts.Interfaces {
		dev, err := net.InterfaceByName(i.Name)
		if err != nil {
			return nil, fmt.Errorf("datapath: interface %s (%s): %w", i.Name, i.Role, err)
		}
		if _, dup := ifaces[i.Role]; dup {
			return nil, fmt.Errorf("datapath: two interfaces for role %s", i.Role)
		}
		ifaces[i.Role] = dev
		if i.MTU > 0 {
			mtus[i.Role] = i.MTU
		}
	}

	// Since 5.11 BPF memory is charged to the cgroup; the old rlimit only
	// matters on older kernels, and raising it needs CAP_SYS_RESOURCE.
	_ = rlimit.RemoveMemlock()

	spec, err := objects()
	if err != nil {
		return nil, fmt.Errorf("datapath: parse objects: %w", err)
	}
	sizes := SizesFor(opts.MaxSessions)
	records, cpus, err := usageEntries(sizes.URRs)
	if err != nil {
		return nil, fmt.Errorf("datapath: %w", err)
	}
	for name, n := range map[string]uint32{
		"ul_teids": sizes.Uplink, "dl_ue4": sizes.Downlink4, "dl_ue6": sizes.Downlink6,
		"pdr_pairs": sizes.ListSlots, "sdfs": sizes.SDFs, "fars": sizes.FARs,
		"qers": sizes.QERs, "urrs": sizes.URRs, "urr_usage": records,
	} {
		spec.Maps[name].MaxEntries = n
	}
	if err := setConstants(spec, opts, ifaces); err != nil {
		return nil, err
	}
	if err := spec.Variables["cfg_urr_slots"].Set(sizes.URRs); err != nil {
		return nil, fmt.Errorf("datapath: set cfg_urr_slots: %w", err)
	}

	d := &Datapath{sizes: sizes, ifaces: ifaces, mtus: mtus, pinPath: opts.PinPath, gtpuAddrs: opts.GTPUAddrs, spec: spec}
	var copts ebpf.CollectionOptions
	if opts.PinPath != "" {
		if err := os.MkdirAll(opts.PinPath, 0o700); err != nil {
			return nil, fmt.Errorf("datapath: pin directory: %w", err)
		}
		for name, m := range spec.Maps {
			// Not the program's constants, nor the next-hop cache: a cache
			// is not state, and each build keeps its own.
			if !strings.HasPrefix(name, ".") && name != "nexthops" {
				m.Pinning = ebpf.PinByName
				d.pinnedMaps = append(d.pinnedMaps, name)
			}
		}
		copts.Maps.PinPath = opts.PinPath
		_, err := os.Stat(filepath.Join(opts.PinPath, "urr_usage"))
		d.reused = err == nil
	}
	if err := spec.LoadAndAssign(&d.objs.bpfMaps, &copts); err != nil {
		if errors.Is(err, ebpf.ErrMapIncompatible) {
			return nil, fmt.Errorf("datapath: maps pinned in %s were made with other sizes or another version; remove them to start afresh: %w", opts.PinPath, err)
		}
		return nil, fmt.Errorf("datapath: load the maps: %w", err)
	}
	if d.usage, err = mapUsage(d.objs.UrrUsage, sizes.URRs, cpus); err != nil {
		d.Close()
		return nil, fmt.Errorf("datapath: %w", err)
	}
	if d.slots, err = mapSlotTables(&d.objs); err != nil {
		d.Close()
		return nil, fmt.Errorf("datapath: %w", err)
	}
	for _, dev := range ifaces {
		if err := d.objs.TxPorts.Put(uint32(dev.Index), uint32(dev.Index)); err != nil {
			d.Close()
			return nil, fmt.Errorf("datapath: add %s to tx_ports: %w", dev.Name, err)
		}
	}
	if err := d.SyncLocalAddrs(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// LoadPrograms loads the XDP programs onto the maps LoadMaps loaded: the
// kernel verifies them, which takes a fraction of a second.
func (d *Datapath) LoadPrograms() error {
	if d.programsLoaded() {
		return nil
	}
	err := d.spec.LoadAndAssign(&d.objs.bpfPrograms, &ebpf.CollectionOptions{MapReplacements: mapsByName(&d.objs.bpfMaps)})
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return fmt.Errorf("datapath: load the programs: %+v", ve)
		}
		return fmt.Errorf("datapath: load the programs: %w", err)
	}
	d.loaded.Store(true)
	return nil
}

func (d *Datapath) programsLoaded() bool { return d.loaded.Load() }

// mapsByName are the maps of m by their names in the object file (their
// ebpf struct tags).
func mapsByName(m *bpfMaps) map[string]*ebpf.Map {
	out := map[string]*ebpf.Map{}
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		if name := v.Type().Field(i).Tag.Get("ebpf"); name != "" {
			out[name] = v.Field(i).Interface().(*ebpf.Map)
		}
	}
	return out
}

// SyncLocalAddrs tells the datapath which addresses are this host's, and
// which of them the N6 device holds, from the devices of the current
// network namespace: traffic to them goes to the kernel (from N6 only to
// the N6 device's), and UEs may not reach them. Call it when addresses
// change.
func (d *Datapath) SyncLocalAddrs() error {
	devs, err := net.Interfaces()
	if err != nil {
		return fmt.Errorf("datapath: list local addresses: %w", err)
	}
	want := map[bpfUpfAddr]uint8{}
	for _, dev := range devs {
		addrs, err := dev.Addrs()
		if err != nil {
			return fmt.Errorf("datapath: list addresses of %s: %w", dev.Name, err)
		}
		var flags uint8
		if n6 := d.ifaces[N6]; n6 != nil && n6.Index == dev.Index {
			flags = localOnN6
		}
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				want[bpfUpfAddr{A: addrWords(netip.AddrFrom16(p.Addr().As16()))}] |= flags
			}
		}
	}
	var key bpfUpfAddr
	var stale []bpfUpfAddr
	var flags uint8
	for it := d.objs.LocalAddrs.Iterate(); it.Next(&key, &flags); {
		if _, ok := want[key]; !ok {
			stale = append(stale, key)
		}
	}
	for _, k := range stale {
		if err := d.objs.LocalAddrs.Delete(&k); err != nil {
			return fmt.Errorf("datapath: forget local address: %w", err)
		}
	}
	for k, flags := range want {
		if err := d.objs.LocalAddrs.Put(&k, flags); err != nil {
			return fmt.Errorf("datapath: add local address: %w", err)
		}
	}
	return nil
}

// localOnN6 is UPF_LOCAL_ON_N6 of the contract: the N6 device holds the
// address, so the data network may reach the host at it.
const localOnN6 = 1 << 0

// nextHopTTLJiffies is Options.NextHopTTL in the cache's clock, jiffies,
// rounded up: the coarse clock's resolution is one jiffy.
func nextHopTTLJiffies(ttl time.Duration) (uint64, error) {
	switch {
	case ttl == 0:
		ttl = 50 * time.Millisecond
	case ttl < 0:
		return 0, nil
	}
	var tick unix.Timespec
	if err := unix.ClockGetres(unix.CLOCK_MONOTONIC_COARSE, &tick); err != nil {
		return 0, fmt.Errorf("datapath: the kernel's tick (clock_getres): %w", err)
	}
	jiffy := time.Duration(tick.Nano())
	if jiffy <= 0 {
		return 0, fmt.Errorf("datapath: the kernel's tick is %v", jiffy)
	}
	return uint64((ttl + jiffy - 1) / jiffy), nil
}

func setConstants(spec *ebpf.CollectionSpec, opts Options, ifaces map[Role]*net.Interface) error {
	var eps [MaxGTPUEndpoints]bpfUpfGtpuEp
	for i, a := range opts.GTPUAddrs {
		eps[i].Family = familyOf(a)
		eps[i].Addr.A = addrWords(a)
	}
	var ifindex [3]uint32
	var mac [4][6]byte
	for role, dev := range ifaces {
		ifindex[role] = uint32(dev.Index)
		copy(mac[role][:], dev.HardwareAddr)
	}
	interval := opts.EventInterval
	if interval <= 0 {
		interval = time.Millisecond
	}
	burst := opts.MBRBurst
	if burst <= 0 {
		burst = DefaultMBRBurst
	}
	nhTTL, err := nextHopTTLJiffies(opts.NextHopTTL)
	if err != nil {
		return err
	}
	var listeners [MaxListeners]bpfUpfListener
	for i, l := range opts.Listeners {
		proto, ok := map[string]uint8{"tcp": unix.IPPROTO_TCP, "udp": unix.IPPROTO_UDP}[l.Network]
		if !ok {
			return fmt.Errorf("datapath: listener on %s port %d: want network tcp or udp", l.Network, l.Port)
		}
		listeners[i] = bpfUpfListener{Proto: proto, Port: l.Port}
	}
	fastPath := uint8(1)
	if opts.NoFastPath {
		fastPath = 0
	}
	for name, v := range map[string]any{
		"cfg_listeners":           listeners,
		"cfg_gtpu_eps":            eps,
		"cfg_ifindex":             ifindex,
		"cfg_mac":                 mac,
		"cfg_event_interval_ns":   uint64(interval.Nanoseconds()),
		"cfg_mbr_burst_ns":        uint64(burst.Nanoseconds()),
		"cfg_nexthop_ttl_jiffies": nhTTL,
		"cfg_fast_path":           fastPath,
	} {
		variable := spec.Variables[name]
		if variable == nil {
			return fmt.Errorf("datapath: the eBPF objects have no %s: built from other sources than this program", name)
		}
		if err := variable.Set(v); err != nil {
			return fmt.Errorf("datapath: set %s: %w", name, err)
		}
	}
	return nil
}

// Reused reports whether Load took over maps pinned by an earlier one,
// with the sessions and counters they hold.
func (d *Datapath) Reused() bool { return d.reused }

// Identity names the pinned maps by their kernel IDs, which are not
// reused while the system runs: state saved for one set of maps can be
// told from state saved for maps since removed and made anew. "" without
// pinning.
func (d *Datapath) Identity() (string, error) {
	var ids []string
	for _, name := range slices.Sorted(slices.Values(d.pinnedMaps)) {
		m, err := ebpf.LoadPinnedMap(filepath.Join(d.pinPath, name), nil)
		if err != nil {
			return "", fmt.Errorf("datapath: identity: %w", err)
		}
		info, err := m.Info()
		m.Close()
		if err != nil {
			return "", fmt.Errorf("datapath: identity: %w", err)
		}
		id, _ := info.ID()
		ids = append(ids, fmt.Sprintf("%s=%d", name, id))
	}
	return strings.Join(ids, ","), nil
}

// Sizes reports the capacities the tables were created with.
func (d *Datapath) Sizes() Sizes { return d.sizes }

// Program is the entry program for a role, for tests and benchmarks.
func (d *Datapath) Program(r Role) *ebpf.Program {
	switch r {
	case N3:
		return d.objs.XdpN3
	case N6:
		return d.objs.XdpN6
	case N9:
		return d.objs.XdpN9
	}
	return nil
}

// Close releases everything loaded. Without pinning the programs are
// detached; with pinning they stay attached and the maps stay, for the
// next Load to take over.
func (d *Datapath) Close() error {
	var err error
	if d.pinPath == "" {
		err = d.Detach()
	} else {
		for _, l := range d.links {
			err = errors.Join(err, l.Close()) // the pinned link keeps the program attached
		}
		d.links = nil
	}
	if d.txSocket != 0 {
		err = errors.Join(err, unix.Close(d.txSocket))
	}
	err = errors.Join(err, d.usage.close(), d.slots.close())
	return errors.Join(err, d.objs.Close())
}
