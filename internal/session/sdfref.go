package session

import "slices"

// resolveSDFRefs fills in every SDF filter of the session that stands for
// the session's filter with its SDF Filter ID (§8.2.5: BID, and no Flow
// Description), from the filter that gives that ID a description, in this
// request or an earlier one. A reference is resolved again whenever the
// filter it names is there, so it follows a change of it; one that never
// named a filter of the session is refused, as a filter that matched
// everything would let traffic through that the SMF meant to keep out.
func resolveSDFRefs(s *Session) error {
	byID := map[uint32]SDF{}
	for _, p := range s.PDRs.All() {
		for _, f := range p.PDI.SDFs {
			if f.HasID && !f.Ref {
				byID[f.FilterID] = f
			}
		}
	}
	var resolved []PDR
	for _, p := range s.PDRs.All() {
		if !slices.ContainsFunc(p.PDI.SDFs, func(f SDF) bool { return f.Ref }) {
			continue
		}
		sdfs := slices.Clone(p.PDI.SDFs) // the previous session shares the slice
		for i, f := range sdfs {
			if !f.Ref {
				continue
			}
			def, ok := byID[f.FilterID]
			switch {
			case ok:
				def.Ref = true
				sdfs[i] = def
			case f.Flow == nil && !f.HasLabel && f.TOSMask == 0:
				return refuse(CauseRuleFailure, IESDFFilter, "PDR %d: SDF filter ID %d names no filter of the session", p.ID, f.FilterID)
			}
		}
		p.PDI.SDFs = sdfs
		resolved = append(resolved, p)
	}
	for _, p := range resolved {
		s.PDRs.Put(p)
	}
	return nil
}
