package report

// RestartChecks are the verdicts of a restart or crash step: no frame lost
// either way across it, every session of the SMF's still known, and the
// same Recovery Time Stamp, so that the SMF keeps them (TS 29.244 §6.2.2).
func RestartChecks(s Step) []Check {
	x := s.Restart
	if x == nil {
		return nil
	}
	var out []Check
	for _, d := range x.Directions {
		out = append(out, AtMost(x.SignalName()+": frames lost "+d.Direction, float64(d.Lost), 0, "frames").
			With(count(d.TxPackets)+" sent, "+count(d.SentWhileAway)+" of them while the UPF was away"))
	}
	out = append(out, AtMost(x.SignalName()+": sessions lost", float64(x.Sessions-x.SessionsAccepted), 0, "sessions").
		With(count(uint64(x.SessionsAccepted))+" of "+count(uint64(x.Sessions))+" modified after it"))
	changed := 0.0
	if !x.SameRecovery() {
		changed = 1
	}
	return append(out, AtMost(x.SignalName()+": Recovery Time Stamp changed", changed, 0, "").
		With("N4 answered again "+f1(x.RestartMs)+" ms after the signal"))
}
