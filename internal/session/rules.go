package session

// addAll adds created rules, refusing an ID the session already has.
func addAll(s *Session, pdrs []PDR, fars []FAR, qers []QER, urrs []URR, bars []BAR) error {
	for _, p := range pdrs {
		if _, dup := s.PDRs[p.ID]; dup {
			return refuse(CauseMandatoryIEIncorrect, IEPDRID, "PDR %d is defined twice", p.ID)
		}
		s.PDRs[p.ID] = p
	}
	for _, f := range fars {
		if _, dup := s.FARs[f.ID]; dup {
			return refuse(CauseMandatoryIEIncorrect, IEFARID, "FAR %d is defined twice", f.ID)
		}
		s.FARs[f.ID] = f
	}
	for _, q := range qers {
		if _, dup := s.QERs[q.ID]; dup {
			return refuse(CauseMandatoryIEIncorrect, IEQERID, "QER %d is defined twice", q.ID)
		}
		s.QERs[q.ID] = q
	}
	for _, u := range urrs {
		if _, dup := s.URRs[u.ID]; dup {
			return refuse(CauseMandatoryIEIncorrect, IEURRID, "URR %d is defined twice", u.ID)
		}
		s.URRs[u.ID] = u
	}
	for _, b := range bars {
		if _, dup := s.BARs[b.ID]; dup {
			return refuse(CauseMandatoryIEIncorrect, IEBARID, "BAR %d is defined twice", b.ID)
		}
		s.BARs[b.ID] = b
	}
	return nil
}

func removeAll(s *Session, r *Modify) error {
	for _, id := range r.RemovePDRs {
		if _, ok := s.PDRs[id]; !ok {
			return refuse(CauseRuleFailure, IEPDRID, "remove PDR %d, which the session does not have", id)
		}
		delete(s.PDRs, id)
	}
	for _, id := range r.RemoveFARs {
		if _, ok := s.FARs[id]; !ok {
			return refuse(CauseRuleFailure, IEFARID, "remove FAR %d, which the session does not have", id)
		}
		delete(s.FARs, id)
	}
	for _, id := range r.RemoveQERs {
		if _, ok := s.QERs[id]; !ok {
			return refuse(CauseRuleFailure, IEQERID, "remove QER %d, which the session does not have", id)
		}
		delete(s.QERs, id)
	}
	for _, id := range r.RemoveURRs {
		if _, ok := s.URRs[id]; !ok {
			return refuse(CauseRuleFailure, IEURRID, "remove URR %d, which the session does not have", id)
		}
		delete(s.URRs, id)
	}
	for _, id := range r.RemoveBARs {
		if _, ok := s.BARs[id]; !ok {
			return refuse(CauseRuleFailure, IEBARID, "remove BAR %d, which the session does not have", id)
		}
		delete(s.BARs, id)
	}
	return nil
}

func updateAll(s *Session, r *Modify) error {
	for _, u := range r.UpdatePDRs {
		p, ok := s.PDRs[u.ID]
		if !ok {
			return refuse(CauseRuleFailure, IEPDRID, "update PDR %d, which the session does not have", u.ID)
		}
		u.ApplyTo(&p)
		s.PDRs[u.ID] = p
	}
	for _, u := range r.UpdateFARs {
		f, ok := s.FARs[u.ID]
		if !ok {
			return refuse(CauseRuleFailure, IEFARID, "update FAR %d, which the session does not have", u.ID)
		}
		u.ApplyTo(&f)
		s.FARs[u.ID] = f
	}
	for _, u := range r.UpdateQERs {
		q, ok := s.QERs[u.ID]
		if !ok {
			return refuse(CauseRuleFailure, IEQERID, "update QER %d, which the session does not have", u.ID)
		}
		u.ApplyTo(&q)
		s.QERs[u.ID] = q
	}
	for _, u := range r.UpdateURRs {
		x, ok := s.URRs[u.ID]
		if !ok {
			return refuse(CauseRuleFailure, IEURRID, "update URR %d, which the session does not have", u.ID)
		}
		u.ApplyTo(&x)
		s.URRs[u.ID] = x
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
