package datapath

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/cilium/ebpf"
)

// Holds and Lookups compare what N4 knows with what the maps hold: a new
// process does so when the one before died between a change to the maps
// and its record of the change (a take-over after a crash).

// Holds says whether op would change nothing: the datapath holds what it
// writes, or, for a removal, nothing at its key. A URR slot always holds:
// its quota left and its counts are the datapath's own, not N4's.
func (d *Datapath) Holds(op Op) (bool, error) {
	switch o := op.(type) {
	case PutFAR:
		v, err := o.FAR.encode()
		if err != nil {
			return false, err
		}
		have, err := d.slots.fars.get(o.ID)
		return have == v, err
	case PutQER:
		have, err := d.slots.qers.get(o.ID)
		have.TatUl, have.TatDl = 0, 0 // the rate state is the datapath's
		return have == o.QER.encode(), err
	case PutURR:
		return true, nil
	case PutUplink:
		key := bpfUpfFteidKey{Teid: beWord(o.Key.TEID), Ep: o.Key.Endpoint}
		return d.holdsRules(d.objs.UlTeids, &key, o.Rules)
	case PutDownlink:
		m, key, err := d.downlinkKey(o.UE)
		if err != nil {
			return false, err
		}
		return d.holdsRules(m, key, o.Rules)
	case DelUplink:
		key := bpfUpfFteidKey{Teid: beWord(o.Key.TEID), Ep: o.Key.Endpoint}
		return absent(d.objs.UlTeids, &key)
	case DelDownlink:
		m, key, err := d.downlinkKey(o.UE)
		if err != nil {
			return false, err
		}
		return absent(m, key)
	}
	return false, fmt.Errorf("%s: not an op the datapath compares", op)
}

// holdsRules: the entry at key, its SDF slots and its list are what
// putting r would write.
func (d *Datapath) holdsRules(m *ebpf.Map, key any, r Rules) (bool, error) {
	w, err := d.rulesWrites(r)
	if err != nil {
		return false, err
	}
	var have bpfUpfRules
	if err := m.Lookup(key, &have); errors.Is(err, ebpf.ErrKeyNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if have != w.entry {
		return false, nil
	}
	for _, s := range w.sdfs {
		if v, err := d.slots.sdfs.get(s.id); err != nil || v != s.v {
			return false, err
		}
	}
	for i, pair := range w.list {
		if v, err := d.slots.lists.get(r.ListID + uint32(i)); err != nil || v != pair {
			return false, err
		}
	}
	return true, nil
}

func absent(m *ebpf.Map, key any) (bool, error) {
	err := m.Lookup(key, make([]byte, m.ValueSize()))
	if errors.Is(err, ebpf.ErrKeyNotExist) {
		return true, nil
	}
	return false, err
}

// Lookups lists the keys of every uplink and downlink lookup entry.
func (d *Datapath) Lookups() (uplink []UplinkKey, downlink []netip.Prefix, err error) {
	ups, err := hashKeys[bpfUpfFteidKey](d.objs.UlTeids)
	if err != nil {
		return nil, nil, fmt.Errorf("datapath: list uplink entries: %w", err)
	}
	for _, k := range ups {
		uplink = append(uplink, UplinkKey{TEID: wordBE(k.Teid), Endpoint: k.Ep})
	}
	v4s, err := hashKeys[uint32](d.objs.DlUe4)
	if err != nil {
		return nil, nil, fmt.Errorf("datapath: list downlink IPv4 entries: %w", err)
	}
	for _, k := range v4s {
		downlink = append(downlink, netip.PrefixFrom(wordsAddr([4]uint32{k}, 4), 32))
	}
	it := d.objs.DlUe6.Iterate() // an LPM trie has no batch lookup
	var v6 bpfUpfUe6Key
	for it.Next(&v6, new(bpfUpfRules)) {
		downlink = append(downlink, netip.PrefixFrom(wordsAddr(v6.Addr, 6), int(v6.Prefixlen)))
	}
	if err := it.Err(); err != nil {
		return nil, nil, fmt.Errorf("datapath: list downlink IPv6 entries: %w", err)
	}
	slices.SortFunc(downlink, netip.Prefix.Compare)
	return uplink, downlink, nil
}

// hashKeys lists the keys of a hash map of lookup entries, a batch at a
// time: one system call a batch, where an iterator makes two an entry
// (0.4 s of a take-over at 100,000 sessions).
func hashKeys[K any](m *ebpf.Map) ([]K, error) {
	const batch = 4096
	var keys []K
	batchKeys, values := make([]K, batch), make([]bpfUpfRules, batch)
	var cursor ebpf.MapBatchCursor
	for {
		n, err := m.BatchLookup(&cursor, batchKeys, values, nil)
		keys = append(keys, batchKeys[:n]...)
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return keys, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
