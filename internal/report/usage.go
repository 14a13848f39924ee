// Package report turns what the datapath measures into the reports TS 29.244
// asks of a UPF: usage reports (§5.2.2) and, for downlink buffering,
// downlink data reports and the buffers themselves (§5.2.4). It knows
// neither the wire format nor who owns the session; the N4 server calls it
// from its one goroutine.
package report

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"time"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// Trigger is a Usage Report Trigger (§8.2.43), octets 5..7 as one number,
// the first octet highest.
type Trigger uint32

const (
	TrigPeriodic      Trigger = 1 << 16 // PERIO
	TrigVolThreshold  Trigger = 1 << 17 // VOLTH
	TrigTimeThreshold Trigger = 1 << 18 // TIMTH
	TrigQuotaHolding  Trigger = 1 << 19 // QUHTI: no traffic for the quota holding time
	TrigStart         Trigger = 1 << 20 // START: the first traffic
	TrigImmediate     Trigger = 1 << 23 // IMMER: Query URR
	TrigVolQuota      Trigger = 1 << 8  // VOLQU
	TrigTimeQuota     Trigger = 1 << 9  // TIMQU
	TrigTermination   Trigger = 1 << 11 // TERMR: session deleted or URR removed
	TrigTEBUR         Trigger = 1 << 1  // TEBUR: the session ended by the UP function
	TrigQuotaValidity Trigger = 1 << 3  // QUVTI: the quota validity time is over
)

// Octets is the trigger as the IE carries it.
func (t Trigger) Octets() []byte { return []byte{byte(t >> 16), byte(t >> 8), byte(t)} }

// Usage is one usage report: what a URR measured since its last report.
type Usage struct {
	URRID      uint32
	Seq        uint32 // UR-SEQN, counting the URR's reports from 0
	Trigger    Trigger
	Start, End time.Time
	Volume     datapath.Usage
	Method     uint8 // session.MeasVolume, session.MeasDuration
}

// Duration is the measured time, whole seconds (§8.2.45).
func (u Usage) Duration() time.Duration { return u.End.Sub(u.Start).Truncate(time.Second) }

// Counters reads a URR slot's counters: the datapath.
type Counters interface {
	Usage(slot uint32) (datapath.Usage, error)
}

// meter is one URR's measurement: the counters at its last report. Its
// fields are exported for Save, which writes it as it is.
type meter struct {
	URR  session.URR
	Slot uint32
	Base datapath.Usage
	// Since is when the current measurement began (the last report).
	Since time.Time
	// NextPeriodic is when PERIO fires; its timer runs on regardless of
	// other reports (§5.2.2.2.1).
	NextPeriodic time.Time
	// QuotaSince is when the time quota was granted.
	QuotaSince time.Time
	// QuotaSpent: the quota's report went; no more until a new grant.
	// So for the quota's holding and validity times.
	VolQuotaSpent, TimeQuotaSpent bool
	HoldingSpent, ValiditySpent   bool
	Seq                           uint32
	// Started: START was reported. ActiveAt is when the URR's packets
	// were last seen to grow (SeenPackets), for QUHTI.
	Started     bool
	ActiveAt    time.Time
	SeenPackets uint64
}

type meterKey struct {
	seid uint64
	urr  uint32
}

// Meters keeps the measurement of every URR of every session.
type Meters struct {
	dp Counters
	// sessions are each session's meters, sorted by URR ID: a slice, as a
	// session has a URR or two, and a map of even one took 190 B.
	sessions map[uint64][]*meter
	bySlot   map[uint32]meterKey
	// watched are the meters with a trigger that time or volume fires:
	// the only ones Due looks at.
	watched map[meterKey]*meter
}

// NewMeters measures through dp.
func NewMeters(dp Counters) *Meters {
	return &Meters{dp: dp, sessions: map[uint64][]*meter{}, bySlot: map[uint32]meterKey{}, watched: map[meterKey]*meter{}}
}

// watchedTriggers fire on their own, not on a request or an event.
const watchedTriggers = session.RepPeriodic | session.RepVolThreshold | session.RepTimeThreshold | session.RepTimeQuota |
	session.RepStart | session.RepQuotaHolding | session.RepQuotaValidity

// Sync makes the session's meters match its URRs once a change is in
// force: new URRs start measuring, changed ones keep their counts (a new
// quota starts over), and removed ones give their final report (TERMR).
// slots says where each URR counts in the datapath.
func (m *Meters) Sync(seid uint64, urrs session.RuleSet[uint32, session.URR], slots map[uint32]uint32, now time.Time) []Usage {
	var final []Usage
	mine := m.sessions[seid]
	for _, mt := range mine {
		if !urrs.Has(mt.URR.ID) {
			final = append(final, m.end(seid, mt, now))
		}
	}
	if urrs.Len() == 0 {
		delete(m.sessions, seid)
		return final
	}
	next := make([]*meter, 0, urrs.Len())
	for id, u := range urrs.All() {
		k := meterKey{seid, id}
		mt, ok := find(mine, id)
		if !ok {
			// Base is zero: the compiler resets a new URR's slot
			// (datapath.PutURR.Reset), so there is nothing to read.
			mt = &meter{Slot: slots[id], Since: now, QuotaSince: now}
			m.bySlot[mt.Slot] = k
		}
		if !ok || u.Grant != mt.URR.Grant { // a new grant, even of the same size
			mt.VolQuotaSpent, mt.HoldingSpent, mt.ValiditySpent = false, false, false
			mt.QuotaSince, mt.TimeQuotaSpent = now, false
			mt.ActiveAt = now
		}
		if u.Period != mt.URR.Period || !ok {
			mt.NextPeriodic = now.Add(firstPeriod(k, u.Period))
		}
		mt.URR = u
		if u.Triggers&watchedTriggers != 0 {
			m.watched[k] = mt
		} else {
			delete(m.watched, k)
		}
		next = append(next, mt)
	}
	m.sessions[seid] = next
	return final
}

// firstPeriod is how long a URR's first periodic measurement lasts: a
// part of the period that its session and URR IDs choose, from a
// thousandth of it to all of it, and then whole periods. SMFs set up
// thousands of sessions within a second; without it their periodic
// reports would all come due in the same tick, forever.
func firstPeriod(k meterKey, period uint32) time.Duration {
	h := fnv.New32a()
	binary.Write(h, binary.BigEndian, k)
	p := time.Duration(period) * time.Second
	return p * time.Duration(1+h.Sum32()%1000) / 1000
}

// find is the meter of URR id among a session's meters.
func find(mine []*meter, id uint32) (*meter, bool) {
	i, ok := slices.BinarySearchFunc(mine, id, func(mt *meter, id uint32) int { return cmp.Compare(mt.URR.ID, id) })
	if !ok {
		return nil, false
	}
	return mine[i], true
}

// Report reads the named URRs of a session now, each a report with trig
// (Query URR: IMMER). Unknown IDs are skipped: the store checked them.
func (m *Meters) Report(seid uint64, ids []uint32, trig Trigger, now time.Time) []Usage {
	var out []Usage
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		if mt, ok := find(m.sessions[seid], id); ok {
			out = append(out, m.take(meterKey{seid, id}, mt, trig, now))
		}
	}
	return out
}

// Close ends a session's measurement: every URR's final report (TERMR).
// Call it once the session's lookups are gone, so nothing counts after.
func (m *Meters) Close(seid uint64, now time.Time) []Usage {
	var out []Usage
	for _, mt := range m.sessions[seid] {
		out = append(out, m.end(seid, mt, now))
	}
	delete(m.sessions, seid)
	return out
}

// QuotaSpent is the report for a URR slot whose volume quota the datapath
// found spent (its EventQuota). ok is false for a slot no URR holds, or a
// quota already reported.
func (m *Meters) QuotaSpent(slot uint32, now time.Time) (seid uint64, u Usage, ok bool) {
	k, ok := m.bySlot[slot]
	if !ok {
		return 0, Usage{}, false
	}
	mt, _ := find(m.sessions[k.seid], k.urr)
	if mt.VolQuotaSpent || mt.URR.Triggers&session.RepVolQuota == 0 {
		return 0, Usage{}, false
	}
	mt.VolQuotaSpent = true
	return k.seid, m.take(k, mt, TrigVolQuota, now), true
}

// Due is the reports whose triggers fired by now, by session: periodic,
// volume and time thresholds, time quotas, start of traffic, quota
// holding and validity times. Before a session's first report of the
// call, room(seid) says whether its SMF may get one now (and takes the
// room): if not, its URRs go on counting and their triggers stay due,
// to fire once it has room, their reports carrying all the usage since
// the last.
func (m *Meters) Due(now time.Time, room func(seid uint64) bool) map[uint64][]Usage {
	out := map[uint64][]Usage{}
	for k, mt := range m.watched {
		t := m.due(mt, now)
		if t == 0 {
			continue
		}
		if _, started := out[k.seid]; !started && !room(k.seid) {
			continue
		}
		arm(mt, t, now)
		out[k.seid] = append(out[k.seid], m.take(k, mt, t, now))
	}
	for _, us := range out {
		slices.SortFunc(us, byURR)
	}
	return out
}

// due is what triggers of mt are due at now. It changes nothing but what
// the meter has seen of the URR's traffic (for QUHTI).
func (m *Meters) due(mt *meter, now time.Time) Trigger {
	u, on := mt.URR, mt.URR.Triggers
	var t Trigger
	if on&session.RepPeriodic != 0 && u.Period > 0 && !now.Before(mt.NextPeriodic) {
		t |= TrigPeriodic
	}
	if on&session.RepTimeThreshold != 0 && u.TimeThreshold > 0 && now.Sub(mt.Since) >= time.Duration(u.TimeThreshold)*time.Second {
		t |= TrigTimeThreshold
	}
	if on&session.RepTimeQuota != 0 && u.TimeQuota > 0 && !mt.TimeQuotaSpent &&
		now.Sub(mt.QuotaSince) >= time.Duration(u.TimeQuota)*time.Second {
		t |= TrigTimeQuota
	}
	if on&session.RepQuotaValidity != 0 && u.QuotaValidity > 0 && !mt.ValiditySpent &&
		now.Sub(mt.QuotaSince) >= time.Duration(u.QuotaValidity)*time.Second {
		t |= TrigQuotaValidity
	}
	if on&(session.RepVolThreshold|session.RepStart|session.RepQuotaHolding) == 0 {
		return t
	}
	c, err := m.dp.Usage(mt.Slot)
	if err != nil {
		return t
	}
	if on&session.RepVolThreshold != 0 && u.VolThreshold != nil && reached(u.VolThreshold, delta(c, mt.Base)) {
		t |= TrigVolThreshold
	}
	return t | traffic(mt, c.Total().Packets, now)
}

// traffic is what the URR's packets make due, n counted since it was
// made: START at the first, QUHTI once none came for the quota holding
// time (since the last, or the grant), each once a grant (arm). Due looks
// every tick, so each comes at most a tick late.
func traffic(mt *meter, n uint64, now time.Time) Trigger {
	u, on := mt.URR, mt.URR.Triggers
	if n != mt.SeenPackets {
		mt.SeenPackets, mt.ActiveAt = n, now
	}
	var t Trigger
	if on&session.RepStart != 0 && !mt.Started && n > 0 {
		t |= TrigStart
	}
	if on&session.RepQuotaHolding != 0 && u.QuotaHolding > 0 && !mt.HoldingSpent &&
		now.Sub(mt.ActiveAt) >= time.Duration(u.QuotaHolding)*time.Second {
		t |= TrigQuotaHolding
	}
	return t
}

// arm records that the triggers t of mt fired: the period goes on, and
// what fires once a grant is spent.
func arm(mt *meter, t Trigger, now time.Time) {
	if t&TrigPeriodic != 0 {
		for p := time.Duration(mt.URR.Period) * time.Second; !now.Before(mt.NextPeriodic); {
			mt.NextPeriodic = mt.NextPeriodic.Add(p)
		}
	}
	mt.TimeQuotaSpent = mt.TimeQuotaSpent || t&TrigTimeQuota != 0
	mt.ValiditySpent = mt.ValiditySpent || t&TrigQuotaValidity != 0
	mt.Started = mt.Started || t&TrigStart != 0
	mt.HoldingSpent = mt.HoldingSpent || t&TrigQuotaHolding != 0
}

// reached: any volume the threshold sets is met (§5.2.2.2.1).
func reached(th *session.Volume, used datapath.Usage) bool {
	at := func(limit *uint64, v uint64) bool { return limit != nil && v >= *limit }
	return at(th.Total, used.Total().Bytes) || at(th.Uplink, used.Uplink.Bytes) || at(th.Downlink, used.Downlink.Bytes)
}

// take makes a report of what mt measured since its last one and starts
// the next measurement.
func (m *Meters) take(k meterKey, mt *meter, t Trigger, now time.Time) Usage {
	c, err := m.dp.Usage(mt.Slot)
	if err != nil {
		c = mt.Base // reports nothing now; the next report catches up
	}
	u := Usage{URRID: k.urr, Seq: mt.Seq, Trigger: t, Start: mt.Since, End: now, Volume: delta(c, mt.Base), Method: mt.URR.Method}
	mt.Seq++
	mt.Base, mt.Since = c, now
	return u
}

// Unreport puts back reports that never reached the SMF (unanswered
// after every retransmission): what they carried counts toward the URR's
// next report, so that nothing counted is lost. It returns the reports of
// URRs gone meanwhile, whose counts it cannot put anywhere.
func (m *Meters) Unreport(seid uint64, us []Usage) (lost []Usage) {
	for _, u := range us {
		mt, ok := find(m.sessions[seid], u.URRID)
		if !ok {
			lost = append(lost, u)
			continue
		}
		mt.Base = delta(mt.Base, u.Volume)
		if mt.Seq == u.Seq+1 { // no report since: this one never was
			mt.Seq, mt.Since = u.Seq, u.Start
		}
	}
	return lost
}

// end gives a meter's final report (TERMR) and drops it from the slot and
// watch indexes; the caller drops it from its session.
func (m *Meters) end(seid uint64, mt *meter, now time.Time) Usage {
	k := meterKey{seid, mt.URR.ID}
	u := m.take(k, mt, TrigTermination, now)
	if m.bySlot[mt.Slot] == k {
		delete(m.bySlot, mt.Slot)
	}
	delete(m.watched, k)
	return u
}

// delta is c - base, field by field; counters only grow.
func delta(c, base datapath.Usage) datapath.Usage {
	sub := func(a, b datapath.Traffic) datapath.Traffic {
		return datapath.Traffic{Packets: a.Packets - min(a.Packets, b.Packets), Bytes: a.Bytes - min(a.Bytes, b.Bytes)}
	}
	return datapath.Usage{Uplink: sub(c.Uplink, base.Uplink), Downlink: sub(c.Downlink, base.Downlink)}
}

func byURR(a, b Usage) int { return int(a.URRID) - int(b.URRID) }
