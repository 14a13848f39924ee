package session

import (
	"net/netip"
	"slices"
)

// allocate resolves the F-TEIDs and UE addresses of the given PDRs (as they
// are in c.Next): chosen ones are picked, given ones checked and reserved.
func (s *Store) allocate(c *Change, pdrs []PDR) error {
	seid := c.Next.SEID
	// CHOOSE ID -> the F-TEID picked for it. An ID the session used before
	// keeps its TEID: §5.5.3 scopes a CHOOSE ID to one message, but SMFs
	// (Open5GS) add a flow's PDR later with the session's CHOOSE ID and
	// expect the tunnel the gNB already has.
	chosen := map[uint8]*FTEID{}
	if c.Prev != nil {
		for _, p := range c.Next.PDRs.All() {
			if f := p.PDI.FTEID; f != nil && f.HasChID && !slices.ContainsFunc(pdrs, func(q PDR) bool { return q.ID == p.ID }) {
				chosen[f.ChooseID] = f
			}
		}
	}
	var ue *UEIP // a UE address chosen in this request
	for _, given := range pdrs {
		p, _ := c.Next.PDRs.Get(given.ID)
		created := CreatedPDR{ID: p.ID}
		if f := p.PDI.FTEID; f != nil {
			got, fresh, err := s.resolveFTEID(c, seid, p, chosen)
			if err != nil {
				return err
			}
			p.PDI.FTEID = got
			if fresh || f.Choose {
				created.FTEID = got
			}
		}
		if u := p.PDI.UEIP; u != nil {
			got, err := s.resolveUEIP(c, seid, p, &ue)
			if err != nil {
				return err
			}
			p.PDI.UEIP = got
			if u.ChooseV4 || u.ChooseV6 {
				created.UEIP = got
			}
		}
		c.Next.PDRs.Put(p)
		if created.FTEID != nil || created.UEIP != nil {
			c.Created = append(c.Created, created)
		}
	}
	return nil
}

func (s *Store) resolveFTEID(c *Change, seid uint64, p PDR, chosen map[uint8]*FTEID) (*FTEID, bool, error) {
	f := p.PDI.FTEID
	if !f.Choose {
		if owner, used := s.teids[f.TEID]; used && owner != seid {
			return nil, false, refuse(CauseRuleFailure, IEFTEID, "PDR %d: TEID %#x belongs to another session", p.ID, f.TEID)
		}
		if !s.isLocal(f.V4) && !s.isLocal(f.V6) {
			return nil, false, refuse(CauseInvalidFTEIDAlloc, IEFTEID, "PDR %d: F-TEID %v/%v is not an address of this UPF", p.ID, f.V4, f.V6)
		}
		s.reserveTEID(c, seid, f.TEID)
		return f, false, nil
	}
	if f.HasChID {
		if got, ok := chosen[f.ChooseID]; ok {
			return got, false, nil
		}
	}
	addrs := s.opts.AccessAddrs
	if p.PDI.Source == Core {
		addrs = s.opts.CoreAddrs
	}
	got := &FTEID{ChooseID: f.ChooseID, HasChID: f.HasChID}
	wantV4 := f.ChooseV4 || !f.ChooseV6
	for _, a := range addrs {
		switch {
		case a.Is4() && wantV4 && !got.V4.IsValid():
			got.V4 = a
		case a.Is6() && f.ChooseV6 && !got.V6.IsValid():
			got.V6 = a
		}
	}
	if !got.V4.IsValid() && !got.V6.IsValid() {
		return nil, false, refuse(CauseInvalidFTEIDAlloc, IEFTEID, "PDR %d: no local GTP-U address for source interface %d", p.ID, p.PDI.Source)
	}
	teid, ok := s.freeTEID()
	if !ok {
		return nil, false, refuse(CauseNoResources, IEFTEID, "PDR %d: every TEID of %#x-%#x is in use", p.ID, s.opts.TEIDFirst, s.opts.TEIDLast)
	}
	got.TEID = teid
	s.reserveTEID(c, seid, teid)
	if f.HasChID {
		chosen[f.ChooseID] = got
	}
	return got, true, nil
}

func (s *Store) reserveTEID(c *Change, seid uint64, t uint32) {
	if _, held := s.teids[t]; !held {
		s.teids[t] = seid
		c.teids = append(c.teids, t)
	}
}

// freeTEID is the next unused TEID after the last one given (next fit).
func (s *Store) freeTEID() (uint32, bool) {
	first, last := s.opts.TEIDFirst, s.opts.TEIDLast
	t := s.nextTEID
	for range uint64(last) - uint64(first) + 1 {
		if t < first || t > last {
			t = first
		}
		if _, used := s.teids[t]; !used {
			s.nextTEID = t + 1
			return t, true
		}
		t++
	}
	return 0, false
}

func (s *Store) isLocal(a netip.Addr) bool {
	return a.IsValid() && (slices.Contains(s.opts.AccessAddrs, a) || slices.Contains(s.opts.CoreAddrs, a))
}

func (s *Store) resolveUEIP(c *Change, seid uint64, p PDR, chosen **UEIP) (*UEIP, error) {
	u := *p.PDI.UEIP
	if u.ChooseV4 || u.ChooseV6 {
		if *chosen != nil {
			got := **chosen
			got.Dest = u.Dest
			return &got, nil
		}
		if u.ChooseV4 {
			a, err := s.pickAddr(p, false)
			if err != nil {
				return nil, err
			}
			u.V4 = a
		}
		if u.ChooseV6 {
			a, err := s.pickAddr(p, true)
			if err != nil {
				return nil, err
			}
			u.V6 = netip.PrefixFrom(a, 64)
		}
		u.ChooseV4, u.ChooseV6 = false, false
		*chosen = &u
	}
	for _, a := range [2]netip.Addr{u.V4, prefixBase(u.V6)} {
		if !a.IsValid() {
			continue
		}
		if owner, used := s.ues[a]; used && owner != seid {
			return nil, refuse(CauseRuleFailure, IEUEIPAddress, "PDR %d: UE address %v belongs to another session", p.ID, a)
		}
		if _, held := s.ues[a]; !held {
			s.ues[a] = seid
			c.ues = append(c.ues, a)
		}
	}
	return &u, nil
}

// pickAddr takes the next free address (IPv4) or /64 (IPv6) from the
// pools of the PDR's network instance.
func (s *Store) pickAddr(p PDR, v6 bool) (netip.Addr, error) {
	pools := s.opts.Pools[p.PDI.NetworkInstance]
	if pools == nil {
		pools = s.opts.Pools[""]
	}
	for _, pool := range pools {
		if pool.Addr().Is6() != v6 {
			continue
		}
		if a, ok := s.nextInPool(pool); ok {
			return a, nil
		}
	}
	return netip.Addr{}, refuse(CauseAllAddressesOccupied, IEUEIPAddress, "PDR %d: no free UE address in the pools of %q", p.ID, p.PDI.NetworkInstance)
}

func (s *Store) nextInPool(pool netip.Prefix) (netip.Addr, bool) {
	step := func(a netip.Addr) netip.Addr {
		if a.Is4() {
			return a.Next()
		}
		b := a.As16() // the next /64
		for i := 7; i >= 0; i-- {
			b[i]++
			if b[i] != 0 {
				break
			}
		}
		return netip.AddrFrom16(b)
	}
	start := s.poolNext[pool]
	if !pool.Contains(start) {
		start = step(pool.Addr()) // the pool's first address stays unused
	}
	for a := start; ; {
		if _, used := s.ues[a]; !used && pool.Contains(a) {
			s.poolNext[pool] = step(a)
			return a, true
		}
		a = step(a)
		if !pool.Contains(a) {
			a = step(pool.Addr())
		}
		if a == start {
			return netip.Addr{}, false
		}
	}
}

// prefixBase is the first address of p, the invalid address for none.
// (Masking an invalid prefix builds an error to throw away.)
func prefixBase(p netip.Prefix) netip.Addr {
	if !p.IsValid() {
		return netip.Addr{}
	}
	return p.Masked().Addr()
}
