package datapath

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// slotTable is an array map made with BPF_F_MMAPABLE (the FARs, QERs,
// URRs, SDFs and PDR lists; the URR usage records), mapped: a slot is
// written and read by a copy, with no system call. That is what makes an
// establishment cheap: a session writes a few slots.
//
// Writes need no fence before a lookup entry points at the slot: the
// entry is published by a system call, in the kernel with release
// semantics (rcu_assign_pointer), which orders this thread's earlier
// stores before it.
type slotTable[T any] struct {
	name   string
	mem    []byte
	stride int
	n      uint32
}

func mapSlots[T any](m *ebpf.Map, name string) (*slotTable[T], error) {
	if size := unsafe.Sizeof(*new(T)); uintptr(m.ValueSize()) != size {
		return nil, fmt.Errorf("map %s: values of %d bytes, want %d", name, m.ValueSize(), size)
	}
	// The kernel keeps the values of a BPF_F_MMAPABLE array at a stride
	// of their size rounded up to 8 bytes, from the mapping's start.
	stride := (int(m.ValueSize()) + 7) &^ 7
	page := unix.Getpagesize()
	size := (stride*int(m.MaxEntries()) + page - 1) / page * page
	mem, err := unix.Mmap(m.FD(), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", name, err)
	}
	return &slotTable[T]{name: name, mem: mem, stride: stride, n: m.MaxEntries()}, nil
}

// check: slot 0 means none, and the table ends at n.
func (t *slotTable[T]) check(first, count uint32) error {
	if first == 0 || uint64(first)+uint64(count) > uint64(t.n) {
		if count == 1 {
			return fmt.Errorf("%s slot %d is outside 1..%d: %w", t.name, first, t.n-1, ErrFull)
		}
		return fmt.Errorf("%s slots %d..%d are outside 1..%d: %w", t.name, first, uint64(first)+uint64(count)-1, t.n-1, ErrFull)
	}
	return nil
}

// at is slot id, which check has allowed.
func (t *slotTable[T]) at(id uint32) *T {
	return (*T)(unsafe.Pointer(&t.mem[int(id)*t.stride]))
}

// put writes the values vs into consecutive slots from first.
func (t *slotTable[T]) put(first uint32, vs ...T) error {
	if err := t.check(first, uint32(len(vs))); err != nil {
		return err
	}
	for i := range vs {
		*t.at(first + uint32(i)) = vs[i]
	}
	return nil
}

// get is a copy of slot id.
func (t *slotTable[T]) get(id uint32) (T, error) {
	if err := t.check(id, 1); err != nil {
		var zero T
		return zero, err
	}
	return *t.at(id), nil
}

func (t *slotTable[T]) close() error {
	if t == nil || t.mem == nil {
		return nil
	}
	err := unix.Munmap(t.mem)
	t.mem = nil
	return err
}

// slotTables are the datapath's slot tables, mapped.
type slotTables struct {
	fars  *slotTable[bpfUpfFar]
	qers  *slotTable[bpfUpfQer]
	urrs  *slotTable[bpfUpfUrr]
	sdfs  *slotTable[bpfUpfSdf]
	lists *slotTable[bpfUpfPdrPair]
}

func mapSlotTables(objs *bpfObjects) (slotTables, error) {
	var s slotTables
	var err error
	if s.fars, err = mapSlots[bpfUpfFar](objs.Fars, "far"); err != nil {
		return s, err
	}
	if s.qers, err = mapSlots[bpfUpfQer](objs.Qers, "qer"); err != nil {
		return s, err
	}
	if s.urrs, err = mapSlots[bpfUpfUrr](objs.Urrs, "urr"); err != nil {
		return s, err
	}
	if s.sdfs, err = mapSlots[bpfUpfSdf](objs.Sdfs, "sdf"); err != nil {
		return s, err
	}
	s.lists, err = mapSlots[bpfUpfPdrPair](objs.PdrPairs, "pdr list")
	return s, err
}

func (s slotTables) close() error {
	return errors.Join(s.fars.close(), s.qers.close(), s.urrs.close(), s.sdfs.close(), s.lists.close())
}
