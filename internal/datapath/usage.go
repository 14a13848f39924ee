package datapath

import (
	"fmt"
	"sync/atomic"

	"github.com/cilium/ebpf"
)

// The URRs' usage records (urr_usage) are mapped into this process: the
// counters are read, and the flags written, without a system call. CPU c's
// record of URR slot i is entry c*slots+i; a CPU's program is the only
// writer of its counters, user space of the flags. A URR slot's bounds are
// those of the URR table (slotTables.urrs), which has slots entries.
type usageRecords struct {
	table *slotTable[bpfUpfUsage]
	slots uint32 // URR slots: the stride from one CPU to the next
	cpus  uint32
}

// usageEntries is how many records the table holds for slots URR slots.
func usageEntries(slots uint32) (uint32, int, error) {
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		return 0, 0, err
	}
	n := uint64(cpus) * uint64(slots)
	if n > 1<<31 {
		return 0, 0, fmt.Errorf("%d URR slots on %d CPUs are more usage records than a table holds", slots, cpus)
	}
	return uint32(n), cpus, nil
}

func mapUsage(m *ebpf.Map, slots uint32, cpus int) (*usageRecords, error) {
	t, err := mapSlots[bpfUpfUsage](m, "urr_usage")
	if err != nil {
		return nil, err
	}
	return &usageRecords{table: t, slots: slots, cpus: uint32(cpus)}, nil
}

func (u *usageRecords) close() error {
	if u == nil {
		return nil
	}
	return u.table.close()
}

// record is CPU cpu's record of URR slot id.
func (u *usageRecords) record(cpu, id uint32) *bpfUpfUsage {
	return u.table.at(cpu*u.slots + id)
}

// setFlags writes a URR's flags into every CPU's record.
func (u *usageRecords) setFlags(id, flags uint32) {
	for cpu := range u.cpus {
		atomic.StoreUint32(&u.record(cpu, id).Flags, flags)
	}
}

// reset zeroes a URR's counters on every CPU.
func (u *usageRecords) reset(id uint32) {
	for cpu := range u.cpus {
		r := u.record(cpu, id)
		for _, c := range []*uint64{&r.UlPkts, &r.UlBytes, &r.DlPkts, &r.DlBytes} {
			atomic.StoreUint64(c, 0)
		}
	}
}

// Usage is what a URR measured: uplink and downlink (total is their sum).
type Usage struct{ Uplink, Downlink Traffic }

// Total is uplink plus downlink.
func (u Usage) Total() Traffic {
	return Traffic{u.Uplink.Packets + u.Downlink.Packets, u.Uplink.Bytes + u.Downlink.Bytes}
}

// Usage reads a URR slot's counters, summed over CPUs. It makes no system
// call.
func (d *Datapath) Usage(urrID uint32) (Usage, error) {
	if err := d.slots.urrs.check(urrID, 1); err != nil {
		return Usage{}, fmt.Errorf("read usage: %w", err)
	}
	var u Usage
	for cpu := range d.usage.cpus {
		r := d.usage.record(cpu, urrID)
		u.Uplink.Packets += atomic.LoadUint64(&r.UlPkts)
		u.Uplink.Bytes += atomic.LoadUint64(&r.UlBytes)
		u.Downlink.Packets += atomic.LoadUint64(&r.DlPkts)
		u.Downlink.Bytes += atomic.LoadUint64(&r.DlBytes)
	}
	return u, nil
}
