package session

import (
	"cmp"
	"fmt"
	"strings"
)

// addAll adds created rules, refusing an ID the session already has. Every
// kind is tried and the first refusal wins; on one the session is discarded.
func addAll(s *Session, pdrs []PDR, fars []FAR, qers []QER, urrs []URR, bars []BAR) error {
	return cmp.Or(
		add(&s.PDRs, pdrs, "PDR", IEPDRID),
		add(&s.FARs, fars, "FAR", IEFARID),
		add(&s.QERs, qers, "QER", IEQERID),
		add(&s.URRs, urrs, "URR", IEURRID),
		add(&s.BARs, bars, "BAR", IEBARID),
	)
}

func add[K cmp.Ordered, V rule[K]](t *RuleSet[K, V], rules []V, kind string, ie uint16) error {
	t.Grow(len(rules))
	for _, r := range rules {
		if t.Has(r.ruleID()) {
			return refuse(CauseMandatoryIEIncorrect, ie, "%s %v is defined twice", kind, r.ruleID())
		}
		t.Put(r)
	}
	return nil
}

func removeAll(s *Session, r *Modify) error {
	return cmp.Or(
		remove(&s.PDRs, r.RemovePDRs, "PDR", IEPDRID),
		remove(&s.FARs, r.RemoveFARs, "FAR", IEFARID),
		remove(&s.QERs, r.RemoveQERs, "QER", IEQERID),
		remove(&s.URRs, r.RemoveURRs, "URR", IEURRID),
		remove(&s.BARs, r.RemoveBARs, "BAR", IEBARID),
	)
}

func remove[K cmp.Ordered, V rule[K]](t *RuleSet[K, V], ids []K, kind string, ie uint16) error {
	for _, id := range ids {
		if !t.Delete(id) {
			return refuse(CauseRuleFailure, ie, "remove %s %v, which the session does not have", kind, id)
		}
	}
	return nil
}

func updateAll(s *Session, r *Modify) error {
	return cmp.Or(
		update(&s.PDRs, r.UpdatePDRs, "PDR", IEPDRID),
		update(&s.FARs, r.UpdateFARs, "FAR", IEFARID),
		update(&s.QERs, r.UpdateQERs, "QER", IEQERID),
		update(&s.URRs, r.UpdateURRs, "URR", IEURRID),
	)
}

func update[K cmp.Ordered, V rule[K], U interface {
	rule[K]
	ApplyTo(*V)
}](t *RuleSet[K, V], ups []U, kind string, ie uint16) error {
	for _, u := range ups {
		v, ok := t.Get(u.ruleID())
		if !ok {
			return refuse(CauseRuleFailure, ie, "update %s %v, which the session does not have", kind, u.ruleID())
		}
		u.ApplyTo(&v)
		t.Put(v)
	}
	return nil
}

// validate checks the session as a whole: every reference resolves, every
// value is one the UPF carries out.
func validate(s *Session) error {
	for _, p := range s.PDRs.All() {
		if err := validatePDR(s, p); err != nil {
			return err
		}
	}
	for _, f := range s.FARs.All() {
		if err := validateFAR(s, f); err != nil {
			return err
		}
	}
	for id, q := range s.QERs.All() {
		if q.GateUL > GateClosed || q.GateDL > GateClosed {
			return refuse(CauseMandatoryIEIncorrect, IEGateStatus, "QER %d: gate status %d/%d: want 0 (open) or 1 (closed)", id, q.GateUL, q.GateDL)
		}
		if q.QFI > 63 {
			return refuse(CauseMandatoryIEIncorrect, IEQFI, "QER %d: QFI %d is over 63", id, q.QFI)
		}
	}
	for id, u := range s.URRs.All() {
		if err := validateURR(id, u); err != nil {
			return err
		}
	}
	return nil
}

func validateURR(id uint32, u URR) error {
	switch {
	case u.Method&(MeasDuration|MeasVolume|MeasEvent) == 0:
		return refuse(CauseMandatoryIEIncorrect, IECreateURR, "URR %d measures nothing", id)
	case u.Method&MeasEvent != 0:
		return refuse(CauseRuleFailure, IEMeasurementMethod, "URR %d: event measurement (EVENT) is not supported", id)
	}
	if extra := u.Triggers &^ RepActedOn; extra != 0 {
		var names []string
		for bit := uint32(1); bit != 0 && bit <= extra; bit <<= 1 {
			if extra&bit != 0 {
				names = append(names, cmp.Or(triggerNames[bit], fmt.Sprintf("bit %#x", bit)))
			}
		}
		return refuse(CauseRuleFailure, IEReportingTriggers, "URR %d: reporting triggers %s are not supported", id, strings.Join(names, ", "))
	}
	return nil
}

func validatePDR(s *Session, p PDR) error {
	if !s.FARs.Has(p.FARID) {
		return refuse(CauseRuleFailure, IEFARID, "PDR %d names FAR %d, which the session does not have", p.ID, p.FARID)
	}
	for _, q := range p.QERIDs {
		if !s.QERs.Has(q) {
			return refuse(CauseRuleFailure, IEQERID, "PDR %d names QER %d, which the session does not have", p.ID, q)
		}
	}
	for _, u := range p.URRIDs {
		if !s.URRs.Has(u) {
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
	if f.Action&(ActIPMA|ActIPMD|ActDFRT|ActEDRT|ActBDPN|ActDDPN|ActDupl) != 0 {
		return refuse(CauseRuleFailure, IEApplyAction, "FAR %d: apply action %#x asks for more than the UPF does (DROP, FORW, BUFF, NOCP)", f.ID, f.Action)
	}
	if f.Action&ActForw != 0 && f.Forw == nil {
		return refuse(CauseConditionalIEMissing, IEForwardingParams, "FAR %d forwards but has no forwarding parameters", f.ID)
	}
	if f.BARID != nil {
		if !s.BARs.Has(*f.BARID) {
			return refuse(CauseRuleFailure, IEBARID, "FAR %d names BAR %d, which the session does not have", f.ID, *f.BARID)
		}
	}
	return nil
}
