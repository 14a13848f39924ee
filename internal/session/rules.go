package session

import "cmp"

// addAll adds created rules, refusing an ID the session already has. Every
// kind is tried and the first refusal wins; on one the session is discarded.
func addAll(s *Session, pdrs []PDR, fars []FAR, qers []QER, urrs []URR, bars []BAR) error {
	return cmp.Or(
		add(s.PDRs, pdrs, func(p PDR) uint16 { return p.ID }, "PDR", IEPDRID),
		add(s.FARs, fars, func(f FAR) uint32 { return f.ID }, "FAR", IEFARID),
		add(s.QERs, qers, func(q QER) uint32 { return q.ID }, "QER", IEQERID),
		add(s.URRs, urrs, func(u URR) uint32 { return u.ID }, "URR", IEURRID),
		add(s.BARs, bars, func(b BAR) uint8 { return b.ID }, "BAR", IEBARID),
	)
}

func add[K comparable, V any](m map[K]V, rules []V, id func(V) K, kind string, ie uint16) error {
	for _, r := range rules {
		if _, dup := m[id(r)]; dup {
			return refuse(CauseMandatoryIEIncorrect, ie, "%s %v is defined twice", kind, id(r))
		}
		m[id(r)] = r
	}
	return nil
}

func removeAll(s *Session, r *Modify) error {
	return cmp.Or(
		remove(s.PDRs, r.RemovePDRs, "PDR", IEPDRID),
		remove(s.FARs, r.RemoveFARs, "FAR", IEFARID),
		remove(s.QERs, r.RemoveQERs, "QER", IEQERID),
		remove(s.URRs, r.RemoveURRs, "URR", IEURRID),
		remove(s.BARs, r.RemoveBARs, "BAR", IEBARID),
	)
}

func remove[K comparable, V any](m map[K]V, ids []K, kind string, ie uint16) error {
	for _, id := range ids {
		if _, ok := m[id]; !ok {
			return refuse(CauseRuleFailure, ie, "remove %s %v, which the session does not have", kind, id)
		}
		delete(m, id)
	}
	return nil
}

func updateAll(s *Session, r *Modify) error {
	return cmp.Or(
		update(s.PDRs, r.UpdatePDRs, func(u PDRUpdate) uint16 { return u.ID }, "PDR", IEPDRID),
		update(s.FARs, r.UpdateFARs, func(u FARUpdate) uint32 { return u.ID }, "FAR", IEFARID),
		update(s.QERs, r.UpdateQERs, func(u QERUpdate) uint32 { return u.ID }, "QER", IEQERID),
		update(s.URRs, r.UpdateURRs, func(u URRUpdate) uint32 { return u.ID }, "URR", IEURRID),
	)
}

func update[K comparable, V any, U interface{ ApplyTo(*V) }](m map[K]V, ups []U, id func(U) K, kind string, ie uint16) error {
	for _, u := range ups {
		v, ok := m[id(u)]
		if !ok {
			return refuse(CauseRuleFailure, ie, "update %s %v, which the session does not have", kind, id(u))
		}
		u.ApplyTo(&v)
		m[id(u)] = v
	}
	return nil
}

// validate checks the session as a whole: every reference resolves, every
// value is one the UPF carries out.
func validate(s *Session) error {
	for _, p := range sortedKeys(s.PDRs) {
		if err := validatePDR(s, s.PDRs[p]); err != nil {
			return err
		}
	}
	for _, id := range sortedKeys(s.FARs) {
		if err := validateFAR(s, s.FARs[id]); err != nil {
			return err
		}
	}
	for _, id := range sortedKeys(s.QERs) {
		q := s.QERs[id]
		if q.GateUL > GateClosed || q.GateDL > GateClosed {
			return refuse(CauseMandatoryIEIncorrect, IEGateStatus, "QER %d: gate status %d/%d: want 0 (open) or 1 (closed)", id, q.GateUL, q.GateDL)
		}
		if q.QFI > 63 {
			return refuse(CauseMandatoryIEIncorrect, IEQFI, "QER %d: QFI %d is over 63", id, q.QFI)
		}
	}
	for _, id := range sortedKeys(s.URRs) {
		if s.URRs[id].Method == 0 {
			return refuse(CauseMandatoryIEIncorrect, IECreateURR, "URR %d measures nothing", id)
		}
	}
	return nil
}

func validatePDR(s *Session, p PDR) error {
	if _, ok := s.FARs[p.FARID]; !ok {
		return refuse(CauseRuleFailure, IEFARID, "PDR %d names FAR %d, which the session does not have", p.ID, p.FARID)
	}
	for _, q := range p.QERIDs {
		if _, ok := s.QERs[q]; !ok {
			return refuse(CauseRuleFailure, IEQERID, "PDR %d names QER %d, which the session does not have", p.ID, q)
		}
	}
	for _, u := range p.URRIDs {
		if _, ok := s.URRs[u]; !ok {
			return refuse(CauseRuleFailure, IEURRID, "PDR %d names URR %d, which the session does not have", p.ID, u)
		}
	}
	if p.OHR != nil && *p.OHR != 0 && *p.OHR != 1 && *p.OHR != 6 {
		return refuse(CauseRuleFailure, IEOuterHeaderRemoval, "PDR %d: outer header removal %d is not supported (GTP-U/UDP/IPv4, /IPv6 and /IP are)", p.ID, *p.OHR)
	}
	if p.PDI.Source > CPFunc {
		return refuse(CauseRuleFailure, IESourceInterface, "PDR %d: source interface %d is not supported", p.ID, p.PDI.Source)
	}
	if p.PDI.FTEID == nil && p.PDI.UEIP == nil {
		return refuse(CauseRuleFailure, IEPDI, "PDR %d matches neither a local F-TEID nor a UE address", p.ID)
	}
	if p.PDI.QFI > 63 {
		return refuse(CauseMandatoryIEIncorrect, IEQFI, "PDR %d: QFI %d is over 63", p.ID, p.PDI.QFI)
	}
	return nil
}

func validateFAR(s *Session, f FAR) error {
	exclusive := f.Action & (ActDrop | ActForw | ActBuff | ActIPMA | ActIPMD)
	if exclusive == 0 || exclusive&(exclusive-1) != 0 {
		return refuse(CauseMandatoryIEIncorrect, IEApplyAction, "FAR %d: apply action %#x: want one of DROP, FORW, BUFF", f.ID, f.Action)
	}
	if f.Action&(ActIPMA|ActIPMD|ActDFRT|ActEDRT|ActBDPN|ActDDPN) != 0 {
		return refuse(CauseRuleFailure, IEApplyAction, "FAR %d: apply action %#x asks for more than the UPF does (DROP, FORW, BUFF, NOCP, DUPL)", f.ID, f.Action)
	}
	if f.Action&ActForw != 0 && f.Forw == nil {
		return refuse(CauseConditionalIEMissing, IEForwardingParams, "FAR %d forwards but has no forwarding parameters", f.ID)
	}
	if f.BARID != nil {
		if _, ok := s.BARs[*f.BARID]; !ok {
			return refuse(CauseRuleFailure, IEBARID, "FAR %d names BAR %d, which the session does not have", f.ID, *f.BARID)
		}
	}
	return nil
}
