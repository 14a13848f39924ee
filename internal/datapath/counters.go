package datapath

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cilium/ebpf"
)

// DropReason says why the datapath dropped a packet.
type DropReason uint32

var dropNames = [...]string{
	"none", "truncated", "malformed_ip", "malformed_gtpu", "gtpu_ext", "gtpu_type",
	"unsupported", "not_local", "no_session", "no_pdr", "ohr_mismatch", "far_drop",
	"far_missing", "gate_closed", "mbr", "quota", "ttl_expired", "mtu", "no_route",
	"no_neigh", "ue_to_local", "redirect", "buffered", "event_lost", "adjust",
	"dn_to_host", "gtpu_ext_unknown", "echo_limited",
}

// String is the reason's name as metrics and logs show it, e.g. "no_pdr".
func (r DropReason) String() string {
	if int(r) < len(dropNames) {
		return dropNames[r]
	}
	return fmt.Sprintf("drop(%d)", uint32(r))
}

// Drop reasons, from the contract header.
const (
	DropTruncated      = DropReason(bpfUpfDropUPF_DROP_TRUNCATED)
	DropMalformedIP    = DropReason(bpfUpfDropUPF_DROP_MALFORMED_IP)
	DropMalformedGTPU  = DropReason(bpfUpfDropUPF_DROP_MALFORMED_GTPU)
	DropGTPUExt        = DropReason(bpfUpfDropUPF_DROP_GTPU_EXT)
	DropGTPUType       = DropReason(bpfUpfDropUPF_DROP_GTPU_TYPE)
	DropUnsupported    = DropReason(bpfUpfDropUPF_DROP_UNSUPPORTED)
	DropNotLocal       = DropReason(bpfUpfDropUPF_DROP_NOT_LOCAL)
	DropNoSession      = DropReason(bpfUpfDropUPF_DROP_NO_SESSION)
	DropNoPDR          = DropReason(bpfUpfDropUPF_DROP_NO_PDR)
	DropOHRMismatch    = DropReason(bpfUpfDropUPF_DROP_OHR_MISMATCH)
	DropFARDrop        = DropReason(bpfUpfDropUPF_DROP_FAR_DROP)
	DropFARMissing     = DropReason(bpfUpfDropUPF_DROP_FAR_MISSING)
	DropGateClosed     = DropReason(bpfUpfDropUPF_DROP_GATE_CLOSED)
	DropMBR            = DropReason(bpfUpfDropUPF_DROP_MBR)
	DropQuota          = DropReason(bpfUpfDropUPF_DROP_QUOTA)
	DropTTLExpired     = DropReason(bpfUpfDropUPF_DROP_TTL_EXPIRED)
	DropMTU            = DropReason(bpfUpfDropUPF_DROP_MTU)
	DropNoRoute        = DropReason(bpfUpfDropUPF_DROP_NO_ROUTE)
	DropNoNeigh        = DropReason(bpfUpfDropUPF_DROP_NO_NEIGH)
	DropUEToLocal      = DropReason(bpfUpfDropUPF_DROP_UE_TO_LOCAL)
	DropRedirect       = DropReason(bpfUpfDropUPF_DROP_REDIRECT)
	DropBuffered       = DropReason(bpfUpfDropUPF_DROP_BUFFERED)
	DropEventLost      = DropReason(bpfUpfDropUPF_DROP_EVENT_LOST)
	DropAdjust         = DropReason(bpfUpfDropUPF_DROP_ADJUST)
	DropDNToHost       = DropReason(bpfUpfDropUPF_DROP_DN_TO_HOST)
	DropGTPUExtUnknown = DropReason(bpfUpfDropUPF_DROP_GTPU_EXT_UNKNOWN)
	DropEchoLimited    = DropReason(bpfUpfDropUPF_DROP_ECHO_LIMITED)
	numDropReasons     = int(bpfUpfDropUPF_DROP__MAX)
)

// Verdict is an XDP action.
type Verdict uint32

const (
	Aborted Verdict = iota
	Dropped
	Passed
	Transmitted
	Redirected
)

// Traffic is packets and bytes.
type Traffic struct{ Packets, Bytes uint64 }

// InterfaceStats is one role's traffic as the datapath saw it.
type InterfaceStats struct{ Rx, Tx Traffic }

// Stats are the datapath's counters, summed over CPUs.
type Stats struct {
	Verdicts   [5]uint64
	Drops      map[DropReason]uint64 // only reasons that occurred
	Interfaces map[Role]InterfaceStats
}

// Stats reads the counters. It costs a few map reads, whatever the number
// of sessions.
func (d *Datapath) Stats() (Stats, error) {
	s := Stats{Drops: map[DropReason]uint64{}, Interfaces: map[Role]InterfaceStats{}}
	var per []uint64
	for v := range s.Verdicts {
		if err := d.objs.Verdicts.Lookup(uint32(v), &per); err != nil {
			return s, fmt.Errorf("read verdicts: %w", err)
		}
		s.Verdicts[v] = sum(per)
	}
	for r := 1; r < numDropReasons; r++ {
		if err := d.objs.Drops.Lookup(uint32(r), &per); err != nil {
			return s, fmt.Errorf("read drops: %w", err)
		}
		if n := sum(per); n > 0 {
			s.Drops[DropReason(r)] = n
		}
	}
	var ifs []bpfUpfIfStats
	for _, role := range []Role{N3, N6, N9} {
		if err := d.objs.IfStats.Lookup(uint32(role), &ifs); err != nil {
			return s, fmt.Errorf("read interface stats: %w", err)
		}
		var t InterfaceStats
		for _, c := range ifs {
			t.Rx.Packets += c.RxPkts
			t.Rx.Bytes += c.RxBytes
			t.Tx.Packets += c.TxPkts
			t.Tx.Bytes += c.TxBytes
		}
		s.Interfaces[role] = t
	}
	return s, nil
}

// QuotaLeft is the volume a URR's quota still allows, in bytes (negative
// once spent: the overshoot is what arrived after the quota ran out).
func (d *Datapath) QuotaLeft(urrID uint32) (int64, error) {
	if err := d.slots.urrs.check(urrID, 1); err != nil {
		return 0, fmt.Errorf("read quota: %w", err)
	}
	return atomic.LoadInt64(&d.slots.urrs.at(urrID).QuotaLeft), nil
}

func sum(per []uint64) uint64 {
	var n uint64
	for _, v := range per {
		n += v
	}
	return n
}

// The names above must follow enum upf_drop.
var _ = [1]struct{}{}[len(dropNames)-numDropReasons]

// MapMemory is the kernel memory the datapath's maps hold, as the kernel
// charges it (memlock in each map's fdinfo).
func (d *Datapath) MapMemory() (uint64, error) {
	var total uint64
	byMap, err := d.MapMemoryByName()
	for _, n := range byMap {
		total += n
	}
	return total, err
}

// MapMemoryByName is MapMemory map by map, by the maps' names in bpf/upf_maps.h.
func (d *Datapath) MapMemoryByName() (map[string]uint64, error) {
	out := map[string]uint64{}
	maps := reflect.ValueOf(d.objs.bpfMaps)
	for i := range maps.NumField() {
		m, ok := maps.Field(i).Interface().(*ebpf.Map)
		if !ok || m == nil {
			continue
		}
		name := maps.Type().Field(i).Tag.Get("ebpf")
		n, err := memlock(m.FD())
		if err != nil {
			return out, fmt.Errorf("memory of map %s: %w", name, err)
		}
		out[name] = n
	}
	return out, nil
}

func memlock(fd int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "memlock:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("no memlock in fdinfo")
}
