package report

import (
	"fmt"

	"github.com/sluice-upf/sluice/internal/saved"
)

// SaveSession and Restore carry the meters across a restart of upfd that
// keeps the datapath (pinned maps): the counters stay in the maps, and
// each meter's base, timers and sequence number come back, so that the
// next report counts from the last one as if nothing happened. Sessions
// are saved apart, so that a journal can write the one that changed.

type savedMeters struct {
	SEID   uint64
	Meters []*meter
}

// SaveSession is a copy of a session's meters, for saved.Append, on any
// goroutine; false if it measures nothing.
func (m *Meters) SaveSession(seid uint64) (any, bool) {
	mine, ok := m.sessions[seid]
	if !ok {
		return nil, false
	}
	v := savedMeters{seid, make([]*meter, len(mine))}
	for i, mt := range mine {
		c := *mt
		v.Meters[i] = &c
	}
	return &v, true
}

// Restore reads what SaveSession made into Meters that measure nothing yet.
func (m *Meters) Restore(sessions []saved.Raw) error {
	if len(m.sessions) > 0 {
		return fmt.Errorf("restore into meters of %d sessions", len(m.sessions))
	}
	for _, raw := range sessions {
		var v savedMeters
		if err := saved.Read(raw, &v); err != nil {
			return fmt.Errorf("restore meters: %w", err)
		}
		m.sessions[v.SEID] = v.Meters
		for _, mt := range v.Meters {
			k := meterKey{v.SEID, mt.URR.ID}
			m.bySlot[mt.Slot] = k
			if mt.URR.Triggers&watchedTriggers != 0 {
				m.watched[k] = mt
			}
		}
	}
	return nil
}

// SavedTypes are the types this package saves, for the journal's Layout.
func SavedTypes() []any { return []any{savedMeters{}} }
