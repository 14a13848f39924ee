package datapath

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Op is one change to the datapath's tables.
type Op interface {
	phase() int
	apply(d *Datapath) error
	String() string
}

// The order in which Apply runs operations: whatever a lookup entry will
// point to is written before the lookup entry, and removed after it, so a
// packet never sees a session half written.
const (
	phaseObjects = iota // FAR, QER and URR slots
	phaseLookups        // uplink and downlink entries
	phaseUnlink         // lookup entries removed
)

// Apply runs ops make-before-break. It stops at the first failure and says
// which operation failed; undoing what was done is the caller's, who knows
// the previous state (rules.Plan's Undo).
//
// A slot that nothing points at any more needs no op: it is left as it is,
// and whoever takes it next writes it whole before pointing at it (a URR's
// counters are reset then). Clearing it would cost a write for nothing a
// packet can see.
func (d *Datapath) Apply(ops []Op) error {
	byPhase := func(a, b Op) int { return cmp.Compare(a.phase(), b.phase()) }
	ordered := ops // most plans come in order: sort a copy of the others
	if !slices.IsSortedFunc(ops, byPhase) {
		ordered = slices.Clone(ops)
		slices.SortStableFunc(ordered, byPhase)
	}
	for i, op := range ordered {
		if err := op.apply(d); err != nil {
			return &ApplyError{Op: op, Done: i, Err: err}
		}
	}
	return nil
}

// ApplyError says which operation of a batch failed and how many ran before it.
type ApplyError struct {
	Op   Op
	Done int
	Err  error
}

func (e *ApplyError) Error() string {
	return fmt.Sprintf("%s: %v", e.Op, e.Err)
}

func (e *ApplyError) Unwrap() error { return e.Err }

// ErrFull means a table has no room for another entry.
var ErrFull = errors.New("map full")

// PutFAR writes a FAR into its slot.
type PutFAR struct {
	ID      uint32
	FAR     FAR
	Session uint32 // named in errors
}

func (o PutFAR) phase() int     { return phaseObjects }
func (o PutFAR) String() string { return fmt.Sprintf("install far %d of session %#x", o.ID, o.Session) }
func (o PutFAR) apply(d *Datapath) error {
	v, err := o.FAR.encode()
	if err != nil {
		return err
	}
	return d.slots.fars.put(o.ID, v)
}

// PutQER writes a QER into its slot, its rate state reset.
type PutQER struct {
	ID      uint32
	QER     QER
	Session uint32 // named in errors
}

func (o PutQER) phase() int     { return phaseObjects }
func (o PutQER) String() string { return fmt.Sprintf("install qer %d of session %#x", o.ID, o.Session) }
func (o PutQER) apply(d *Datapath) error {
	return d.slots.qers.put(o.ID, o.QER.encode())
}

// PutURR writes a URR into its slot. Its usage counters are left alone, so
// a URR counts on across changes, unless Reset (a slot given to a new URR).
type PutURR struct {
	ID      uint32
	URR     URR
	Reset   bool
	Session uint32 // named in errors
}

func (o PutURR) phase() int     { return phaseObjects }
func (o PutURR) String() string { return fmt.Sprintf("install urr %d of session %#x", o.ID, o.Session) }
func (o PutURR) apply(d *Datapath) error {
	// The quota before the flags that have it read; put checks the
	// slot, which bounds the usage records too.
	if err := d.slots.urrs.put(o.ID, o.URR.encode()); err != nil {
		return err
	}
	if o.Reset {
		d.usage.reset(o.ID)
	}
	d.usage.setFlags(o.ID, o.URR.flags())
	return nil
}

// PutUplink points a local F-TEID at rules (after writing their PDR list
// and SDF slots).
type PutUplink struct {
	Key   UplinkKey
	Rules Rules
}

func (o PutUplink) phase() int { return phaseLookups }
func (o PutUplink) String() string {
	return fmt.Sprintf("install uplink teid %#x of session %#x", o.Key.TEID, o.Rules.Session)
}
func (o PutUplink) apply(d *Datapath) error {
	key := bpfUpfFteidKey{Teid: beWord(o.Key.TEID), Ep: o.Key.Endpoint}
	return d.putRules(d.objs.UlTeids, &key, o.Rules)
}

// PutDownlink points a UE address (IPv4 /32, or an IPv6 prefix) at rules.
type PutDownlink struct {
	UE    netip.Prefix
	Rules Rules
}

func (o PutDownlink) phase() int { return phaseLookups }
func (o PutDownlink) String() string {
	return fmt.Sprintf("install downlink %s of session %#x", o.UE, o.Rules.Session)
}
func (o PutDownlink) apply(d *Datapath) error {
	m, key, err := d.downlinkKey(o.UE)
	if err != nil {
		return err
	}
	return d.putRules(m, key, o.Rules)
}

// SDF slots and the list go in first: a lookup entry never names a slot
// not yet written.
func (d *Datapath) putRules(m *ebpf.Map, key any, r Rules) error {
	w, err := d.rulesWrites(r)
	if err != nil {
		return err
	}
	for _, s := range w.sdfs {
		if err := d.slots.sdfs.put(s.id, s.v); err != nil {
			return err
		}
	}
	if len(w.list) > 0 {
		if err := d.slots.lists.put(r.ListID, w.list...); err != nil {
			return err
		}
	}
	if err := m.Put(key, &w.entry); err != nil {
		if errors.Is(err, unix.E2BIG) {
			return fmt.Errorf("%w (%d entries)", ErrFull, m.MaxEntries())
		}
		return err
	}
	return nil
}

// rulesWrites is what putting a lookup entry of r writes: its SDF slots,
// its list, and the entry.
type rulesWrites struct {
	sdfs  []sdfWrite
	list  []bpfUpfPdrPair // from r.ListID on; none for one PDR
	entry bpfUpfRules
}

type sdfWrite struct {
	id uint32
	v  bpfUpfSdf
}

func (d *Datapath) rulesWrites(r Rules) (rulesWrites, error) {
	var w rulesWrites
	var err error
	if w.entry, err = r.encode(); err != nil {
		return w, err
	}
	if far, ok := d.farIn(r.PDRs[0].FARID); ok {
		w.entry.inlineFAR(far, d.gtpuAddrs)
	}
	for _, p := range r.PDRs {
		if !p.Filter.NeedsSlot() {
			continue
		}
		sdf, err := p.Filter.encode()
		if err != nil {
			return w, fmt.Errorf("pdr %d: %w", p.ID, err)
		}
		w.sdfs = append(w.sdfs, sdfWrite{p.SDFID, sdf})
	}
	if len(r.PDRs) > 1 {
		if w.list, err = r.encodeList(); err != nil {
			return w, err
		}
	}
	return w, nil
}

// farIn is the FAR in slot id. The batch's FARs are in their slots before
// its lookup entries go in (phaseObjects), and a slot that a lookup entry
// reaches is never rewritten (a changed FAR takes a new slot: rules), so
// the entry may carry a copy.
func (d *Datapath) farIn(id uint32) (bpfUpfFar, bool) {
	f, err := d.slots.fars.get(id)
	return f, err == nil
}

func (d *Datapath) downlinkKey(ue netip.Prefix) (*ebpf.Map, any, error) {
	switch {
	case ue.Addr().Is4() && ue.Bits() == 32:
		k := addrWords(ue.Addr())[0]
		return d.objs.DlUe4, &k, nil
	case ue.Addr().Is6() && ue.Bits() > 0:
		k := bpfUpfUe6Key{Prefixlen: uint32(ue.Bits()), Addr: addrWords(ue.Masked().Addr())}
		return d.objs.DlUe6, &k, nil
	}
	return nil, nil, fmt.Errorf("ue address %s: want an IPv4 /32 or an IPv6 prefix", ue)
}

// DelUplink removes a local F-TEID's entry.
type DelUplink struct{ Key UplinkKey }

func (o DelUplink) phase() int     { return phaseUnlink }
func (o DelUplink) String() string { return fmt.Sprintf("remove uplink teid %#x", o.Key.TEID) }
func (o DelUplink) apply(d *Datapath) error {
	key := bpfUpfFteidKey{Teid: beWord(o.Key.TEID), Ep: o.Key.Endpoint}
	return ignoreMissing(d.objs.UlTeids.Delete(&key))
}

// DelDownlink removes a UE address's entry.
type DelDownlink struct{ UE netip.Prefix }

func (o DelDownlink) phase() int     { return phaseUnlink }
func (o DelDownlink) String() string { return fmt.Sprintf("remove downlink %s", o.UE) }
func (o DelDownlink) apply(d *Datapath) error {
	m, key, err := d.downlinkKey(o.UE)
	if err != nil {
		return err
	}
	return ignoreMissing(m.Delete(key))
}

func ignoreMissing(err error) error {
	if errors.Is(err, ebpf.ErrKeyNotExist) {
		return nil
	}
	return err
}
