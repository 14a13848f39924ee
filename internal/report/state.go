package report

import (
	"encoding/json"
	"fmt"
)

// Save and Restore carry the meters across a restart of upfd that keeps
// the datapath (pinned maps): the counters stay in the maps, and each
// meter's base, timers and sequence number come back, so that the next
// report counts from the last one as if nothing happened.

type savedMeters struct {
	SEID   uint64
	Meters []*meter
}

// Save writes a count of sessions, then each session's meters.
func (m *Meters) Save(enc *json.Encoder) error {
	if err := enc.Encode(len(m.sessions)); err != nil {
		return err
	}
	for seid, mine := range m.sessions {
		if err := enc.Encode(savedMeters{seid, mine}); err != nil {
			return fmt.Errorf("save the meters of session %#x: %w", seid, err)
		}
	}
	return nil
}

// Restore reads what Save wrote into Meters that measure nothing yet.
func (m *Meters) Restore(dec *json.Decoder) error {
	if len(m.sessions) > 0 {
		return fmt.Errorf("restore into meters of %d sessions", len(m.sessions))
	}
	var n int
	if err := dec.Decode(&n); err != nil {
		return err
	}
	for range n {
		var v savedMeters
		if err := dec.Decode(&v); err != nil {
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
