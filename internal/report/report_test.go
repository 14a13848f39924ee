package report

import (
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// counters stands in for the datapath's URR counters, slot by slot.
type counters map[uint32]datapath.Usage

func (c counters) Usage(slot uint32) (datapath.Usage, error) { return c[slot], nil }

func (c counters) add(slot uint32, ulBytes, dlBytes uint64) {
	u := c[slot]
	u.Uplink.Packets, u.Uplink.Bytes = u.Uplink.Packets+1, u.Uplink.Bytes+ulBytes
	u.Downlink.Packets, u.Downlink.Bytes = u.Downlink.Packets+1, u.Downlink.Bytes+dlBytes
	c[slot] = u
}

var t0 = time.Unix(1_800_000_000, 0)

// everyone has room for reports.
func everyone(uint64) bool { return true }

func u64(v uint64) *uint64 { return &v }

// urrs is a session's URRs.
func urrs(us ...session.URR) session.RuleSet[uint32, session.URR] {
	var set session.RuleSet[uint32, session.URR]
	for _, u := range us {
		set.Put(u)
	}
	return set
}

func TestReportsCountSinceTheLastReport(t *testing.T) {
	c := counters{}
	m := NewMeters(c)
	m.Sync(1, urrs(session.URR{ID: 7, Method: session.MeasVolume}), map[uint32]uint32{7: 3}, t0)
	c.add(3, 100, 200)
	q := m.Report(1, []uint32{7}, TrigImmediate, t0.Add(time.Second))
	if len(q) != 1 || q[0].Volume.Uplink.Bytes != 100 || q[0].Volume.Downlink.Bytes != 200 || q[0].Seq != 0 {
		t.Fatalf("query: %+v", q)
	}
	c.add(3, 10, 20)
	final := m.Close(1, t0.Add(2*time.Second))
	if len(final) != 1 || final[0].Volume.Total().Bytes != 30 || final[0].Seq != 1 || final[0].Trigger != TrigTermination ||
		!final[0].Start.Equal(t0.Add(time.Second)) {
		t.Fatalf("final: %+v", final)
	}
	if m.Close(1, t0) != nil {
		t.Error("a closed session reports again")
	}
}

// A report the SMF never answered is put back: the next one carries its
// counts, with its sequence number and start, as if it had not been made.
func TestUnansweredReportCountsAgain(t *testing.T) {
	c := counters{}
	m := NewMeters(c)
	m.Sync(1, urrs(session.URR{ID: 7, Method: session.MeasVolume}), map[uint32]uint32{7: 3}, t0)
	c.add(3, 100, 200)
	lostReport := m.Report(1, []uint32{7}, TrigImmediate, t0.Add(time.Second))
	c.add(3, 10, 20)
	if lost := m.Unreport(1, lostReport); lost != nil {
		t.Fatalf("Unreport lost %+v", lost)
	}
	next := m.Report(1, []uint32{7}, TrigImmediate, t0.Add(2*time.Second))
	if len(next) != 1 || next[0].Volume.Uplink.Bytes != 110 || next[0].Volume.Downlink.Bytes != 220 ||
		next[0].Volume.Uplink.Packets != 2 || next[0].Seq != 0 || !next[0].Start.Equal(t0) {
		t.Fatalf("report after an unanswered one: %+v", next)
	}
	m.Close(1, t0.Add(3*time.Second))
	if lost := m.Unreport(1, next); len(lost) != 1 {
		t.Errorf("Unreport of a closed session's URR: lost %+v, want the report back", lost)
	}
}

func TestRemovedURRGivesItsFinalReport(t *testing.T) {
	c := counters{}
	m := NewMeters(c)
	m.Sync(1, urrs(session.URR{ID: 1}, session.URR{ID: 2}), map[uint32]uint32{1: 1, 2: 2}, t0)
	c.add(2, 5, 0)
	final := m.Sync(1, urrs(session.URR{ID: 1}), map[uint32]uint32{1: 1}, t0.Add(time.Second))
	if len(final) != 1 || final[0].URRID != 2 || final[0].Volume.Uplink.Bytes != 5 {
		t.Fatalf("final of the removed URR: %+v", final)
	}
	if q := m.Report(1, []uint32{1, 2}, TrigImmediate, t0.Add(2*time.Second)); len(q) != 1 || q[0].URRID != 1 {
		t.Errorf("after the removal, a query of both: %+v, want URR 1's alone", q)
	}
}

func TestTriggers(t *testing.T) {
	c := counters{}
	m := NewMeters(c)
	m.Sync(1, urrs(
		session.URR{ID: 2, Triggers: session.RepVolThreshold, VolThreshold: &session.Volume{Downlink: u64(1000)}},
		session.URR{ID: 3, Triggers: session.RepTimeQuota, TimeQuota: 5},
	), map[uint32]uint32{2: 2, 3: 3}, t0)
	if due := m.Due(t0.Add(4*time.Second), everyone); len(due) != 0 {
		t.Fatalf("nothing due yet: %+v", due)
	}
	c.add(2, 0, 1000)
	due := m.Due(t0.Add(5*time.Second), everyone)[1]
	if len(due) != 2 || due[0].URRID != 2 || due[0].Trigger != TrigVolThreshold || due[1].URRID != 3 || due[1].Trigger != TrigTimeQuota {
		t.Fatalf("at 5 s: %+v", due)
	}
	if due := m.Due(t0.Add(19*time.Second), everyone); len(due) != 0 {
		t.Fatalf("the time quota reports once: %+v", due)
	}
}

// Periodic reports of URRs made at once come due spread over their first
// period, then each every period; a session without room for reports
// waits, and then reports all it counted.
func TestPeriodicReportsAreSpreadAndWait(t *testing.T) {
	c := counters{}
	m := NewMeters(c)
	const n = 1000
	for seid := range uint64(n) {
		m.Sync(seid, urrs(session.URR{ID: 1, Method: session.MeasVolume, Triggers: session.RepPeriodic, Period: 1}),
			map[uint32]uint32{1: uint32(seid)}, t0)
	}
	tick := func(i int) time.Time { return t0.Add(time.Duration(i) * 100 * time.Millisecond) }
	busiest, total := 0, 0
	for i := 1; i <= 10; i++ {
		due := m.Due(tick(i), everyone)
		busiest, total = max(busiest, len(due)), total+len(due)
	}
	if total != n || busiest > n/5 {
		t.Fatalf("first second: %d of %d reported, at most %d in one tick; want all, none over %d", total, n, busiest, n/5)
	}
	for i := 11; i <= 20; i++ {
		total += len(m.Due(tick(i), everyone))
	}
	if total != 2*n {
		t.Errorf("after two seconds: %d reports, want one each a second (%d)", total, 2*n)
	}

	// Session 7 has no room for a while: it reports once it has, all of it.
	c.add(7, 100, 0)
	held := func(seid uint64) bool { return seid != 7 }
	for i := 21; i <= 40; i++ {
		if due := m.Due(tick(i), held); len(due[7]) != 0 {
			t.Fatalf("session 7 reported without room: %+v", due[7])
		}
	}
	c.add(7, 100, 0)
	var got []Usage
	for i := 41; i <= 50 && got == nil; i++ {
		got = m.Due(tick(i), everyone)[7]
	}
	if len(got) != 1 || got[0].Volume.Uplink.Bytes != 200 || got[0].Trigger != TrigPeriodic {
		t.Errorf("session 7 once it has room: %+v, want one periodic report with its 200 bytes", got)
	}
}

// START reports the first traffic, QUHTI a quota holding time without
// any, QUVTI the end of a quota's validity: each once a grant.
func TestTriggersOfTrafficAndQuotaTimes(t *testing.T) {
	c := counters{}
	m := NewMeters(c)
	set := func(grant uint32) session.RuleSet[uint32, session.URR] {
		return urrs(
			session.URR{ID: 1, Method: session.MeasVolume, Triggers: session.RepStart},
			session.URR{ID: 2, Method: session.MeasVolume, Triggers: session.RepQuotaHolding, QuotaHolding: 3, Grant: grant},
			session.URR{ID: 3, Method: session.MeasVolume, Triggers: session.RepQuotaValidity, QuotaValidity: 8, Grant: grant},
		)
	}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	triggers := func(s int) map[uint32]Trigger {
		got := map[uint32]Trigger{}
		for _, u := range m.Due(at(s), everyone)[1] {
			got[u.URRID] = u.Trigger
		}
		return got
	}
	m.Sync(1, set(0), map[uint32]uint32{1: 1, 2: 2, 3: 3}, t0)
	if got := triggers(1); len(got) != 0 {
		t.Fatalf("no traffic yet, at 1 s: %v", got)
	}
	c.add(1, 100, 0)
	c.add(2, 100, 0)
	if got := triggers(2); len(got) != 1 || got[1] != TrigStart {
		t.Fatalf("at 2 s, the first packet: %v, want URR 1 START", got)
	}
	c.add(1, 100, 0)
	if got := triggers(4); len(got) != 0 {
		t.Fatalf("at 4 s, START again or QUHTI early: %v", got)
	}
	if got := triggers(5); len(got) != 1 || got[2] != TrigQuotaHolding {
		t.Fatalf("at 5 s, 3 s since URR 2's last packet: %v, want QUHTI", got)
	}
	if got := triggers(8); len(got) != 1 || got[3] != TrigQuotaValidity {
		t.Fatalf("at 8 s, URR 3's quota is no longer valid: %v, want QUVTI", got)
	}
	if got := triggers(20); len(got) != 0 {
		t.Fatalf("each fires once a grant: %v", got)
	}
	m.Sync(1, set(1), map[uint32]uint32{1: 1, 2: 2, 3: 3}, at(20))
	if got := triggers(28); len(got) != 2 || got[2] != TrigQuotaHolding || got[3] != TrigQuotaValidity {
		t.Fatalf("after a new grant at 20 s, at 28 s: %v, want QUHTI and QUVTI again", got)
	}
}

func TestVolumeQuotaReportsOncePerGrant(t *testing.T) {
	c := counters{}
	m := NewMeters(c)
	grant := func(n uint32) session.RuleSet[uint32, session.URR] {
		return urrs(session.URR{ID: 1, Triggers: session.RepVolQuota, VolQuota: &session.Volume{Total: u64(100)}, Grant: n})
	}
	m.Sync(1, grant(0), map[uint32]uint32{1: 9}, t0)
	c.add(9, 100, 0)
	if seid, u, ok := m.QuotaSpent(9, t0); !ok || seid != 1 || u.Trigger != TrigVolQuota || u.Volume.Uplink.Bytes != 100 {
		t.Fatalf("quota: %v %d %+v", ok, seid, u)
	}
	if _, _, ok := m.QuotaSpent(9, t0); ok {
		t.Error("the same quota reported twice")
	}
	m.Sync(1, grant(0), map[uint32]uint32{1: 9}, t0) // the same grant
	if _, _, ok := m.QuotaSpent(9, t0); ok {
		t.Error("a change that grants nothing resets the quota")
	}
	m.Sync(1, grant(1), map[uint32]uint32{1: 9}, t0) // a new grant of the same size
	if _, _, ok := m.QuotaSpent(9, t0); !ok {
		t.Error("a new grant's quota is not reported")
	}
}

func TestBuffersKeepOrderAndBounds(t *testing.T) {
	b := NewBuffers(2, 3)
	for i := range 3 {
		b.Hold(1, 0, []byte{byte(i)})
	}
	b.Hold(2, 5, []byte{10})
	b.Hold(2, 5, []byte{11}) // over the total
	if b.Overflowed != 2 || b.Held() != 3 {
		t.Fatalf("overflowed %d held %d, want 2 and 3", b.Overflowed, b.Held())
	}
	if got := b.Take(1); len(got) != 2 || got[0][0] != 0 || got[1][0] != 1 {
		t.Fatalf("take: %v", got)
	}
	if !b.Notify(1) || b.Notify(1) || !b.Notify(2) || b.Notify(2) {
		t.Error("one notification per buffering period")
	}
	b.Discard(2)
	if b.Discarded != 1 || b.Held() != 0 {
		t.Errorf("discarded %d held %d", b.Discarded, b.Held())
	}
}
