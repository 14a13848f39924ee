package session

import (
	"math"
	"math/bits"
)

// Admission of guaranteed bit rates. A QER's GBR (the GFBR of a GBR QoS
// flow, TS 23.501 §5.7.2.5) is a promise the UPF makes: the Store admits a
// request only if the GBRs of all installed QERs, with the request's, stay
// within Options.GBRCapacity, in each direction.
//
// The sums are over QERs, not PDRs: a QER shared by an uplink and a
// downlink PDR, or by several flows, counts once. They are kept exactly: a
// request is judged by what it changes (the session's sum before and
// after), and Commit moves the sum by just that, so updates, removals and
// deletions give back what they held. Restore recomputes them from the
// sessions; they are never saved.

// BitRates is a rate in each direction, in bit/s.
type BitRates struct{ UL, DL uint64 }

// gbrBook is the Store's account of guaranteed bit rate.
type gbrBook struct {
	installed BitRates // the GBRs of the QERs in force
	held      BitRates // growth admitted for changes planned, not yet committed
}

// gbrClaim is what one planned change does to the account.
type gbrClaim struct {
	prev, next BitRates // the session's GBRs before and after
	held       BitRates // the growth it holds until Commit or Abort
}

// AdmittedGBR is the sum of the GBRs of the installed QERs.
func (s *Store) AdmittedGBR() BitRates { return s.gbr.installed }

// admitGBR checks the GBRs of the session c makes, and holds the growth
// they bring. A request that lowers or keeps a direction's sum is never
// refused for it, even over the capacity (which a restart with a lower one
// can leave).
func (s *Store) admitGBR(c *Change, req Request) error {
	c.gbr.prev = gbrOf(c.Prev)
	if c.Next == nil {
		return nil
	}
	if err := gbrWithinMBR(c.Prev, c.Next); err != nil {
		return err
	}
	next := gbrOf(c.Next)
	held := BitRates{UL: floorSub(next.UL, c.gbr.prev.UL), DL: floorSub(next.DL, c.gbr.prev.DL)} // the growth
	for _, d := range directions {
		if d.of(next) == math.MaxUint64 { // the sum overflowed
			ie, id := gbrOffender(req, d)
			return refuse(CauseNoResources, ie, "QER %d: the session's %s GBRs add up to more than %d bit/s", id, d, uint64(math.MaxUint64))
		}
		if err := s.gbrFits(d, d.of(held), req); err != nil {
			return err
		}
	}
	c.gbr.next, c.gbr.held = next, held
	s.gbr.held.UL += held.UL
	s.gbr.held.DL += held.DL
	return nil
}

// gbrFits refuses growth in direction d that would take the admitted GBR,
// with what planned changes hold, over the capacity (0: no limit but what
// a uint64 counts).
func (s *Store) gbrFits(d direction, growth uint64, req Request) error {
	if growth == 0 {
		return nil
	}
	capacity, admitted := d.of(s.opts.GBRCapacity), satAdd(d.of(s.gbr.installed), d.of(s.gbr.held))
	limit := capacity
	if limit == 0 {
		limit = math.MaxUint64
	}
	if total, carry := bits.Add64(admitted, growth, 0); carry == 0 && total <= limit {
		return nil
	}
	ie, id := gbrOffender(req, d)
	if capacity == 0 {
		return refuse(CauseNoResources, ie, "QER %d: %d bit/s more %s GBR would overflow the admitted %d bit/s", id, growth, d, admitted)
	}
	return refuse(CauseNoResources, ie, "QER %d: %d bit/s more %s GBR would exceed gbr_capacity.%s: %d of its %d bit/s are admitted",
		id, growth, d, d, admitted, capacity)
}

// direction is uplink or downlink, as gbr_capacity names them.
type direction string

const (
	uplink   direction = "uplink"
	downlink direction = "downlink"
)

var directions = []direction{uplink, downlink}

// of is r's rate in direction d.
func (d direction) of(r BitRates) uint64 {
	if d == uplink {
		return r.UL
	}
	return r.DL
}

// commitGBR moves the account by what c changed.
func (s *Store) commitGBR(c *Change) {
	in := &s.gbr.installed
	in.UL = satAdd(floorSub(in.UL, c.gbr.prev.UL), c.gbr.next.UL)
	in.DL = satAdd(floorSub(in.DL, c.gbr.prev.DL), c.gbr.next.DL)
	s.releaseGBR(c)
}

// releaseGBR gives back the growth c held.
func (s *Store) releaseGBR(c *Change) {
	s.gbr.held.UL = floorSub(s.gbr.held.UL, c.gbr.held.UL)
	s.gbr.held.DL = floorSub(s.gbr.held.DL, c.gbr.held.DL)
	c.gbr.held = BitRates{}
}

// adoptGBR counts a restored session's QERs.
func (s *Store) adoptGBR(x *Session) {
	g := gbrOf(x)
	s.gbr.installed.UL = satAdd(s.gbr.installed.UL, g.UL)
	s.gbr.installed.DL = satAdd(s.gbr.installed.DL, g.DL)
}

// gbrOf sums the GBRs of x's QERs (x nil: none); a sum that overflows is
// the most a uint64 holds.
func gbrOf(x *Session) (sum BitRates) {
	if x == nil {
		return BitRates{}
	}
	for _, q := range x.QERs.All() {
		sum.UL = satAdd(sum.UL, q.GBRUL)
		sum.DL = satAdd(sum.DL, q.GBRDL)
	}
	return sum
}

// gbrWithinMBR refuses a created or changed QER whose GBR is above its MBR
// in a direction where it has one (MBR 0 polices nothing). The GFBR is
// guaranteed within the MFBR (TS 23.501 §5.7.2.5): a QER guaranteeing more
// than it lets through cannot be carried out as a rule. QERs the request
// leaves as they were are not judged again.
func gbrWithinMBR(prev, next *Session) error {
	for id, q := range next.QERs.All() {
		if prev != nil {
			if old, ok := prev.QERs.Get(id); ok && old == q {
				continue
			}
		}
		if q.MBRUL > 0 && q.GBRUL > q.MBRUL {
			return refuse(CauseRuleFailure, IEGBR, "QER %d: uplink GBR %d bit/s is above its MBR %d bit/s", id, q.GBRUL, q.MBRUL)
		}
		if q.MBRDL > 0 && q.GBRDL > q.MBRDL {
			return refuse(CauseRuleFailure, IEGBR, "QER %d: downlink GBR %d bit/s is above its MBR %d bit/s", id, q.GBRDL, q.MBRDL)
		}
	}
	return nil
}

// gbrOffender names the IE that brought GBR in a direction: a Create QER
// with one, else an Update QER that sets one (the only other way a
// session's GBR grows). It gives the IE type and the QER's ID.
func gbrOffender(req Request, d direction) (uint16, uint32) {
	gbr := func(ul, dl uint64) bool { return d.of(BitRates{ul, dl}) > 0 }
	var creates []QER
	var updates []QERUpdate
	switch r := req.(type) {
	case *Establish:
		creates = r.QERs
	case *Modify:
		creates, updates = r.CreateQERs, r.UpdateQERs
	}
	for _, q := range creates {
		if gbr(q.GBRUL, q.GBRDL) {
			return IECreateQER, q.ID
		}
	}
	for _, u := range updates {
		if gbr(valueOf(u.GBRUL), valueOf(u.GBRDL)) {
			return IEUpdateQER, u.ID
		}
	}
	return IECreateQER, 0
}

func valueOf(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// satAdd is a+b, or the most a uint64 holds.
func satAdd(a, b uint64) uint64 {
	sum, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return sum
}

// floorSub is a-b, or 0.
func floorSub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}
