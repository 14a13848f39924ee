package pfcp

import (
	"net/netip"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/report"
	"github.com/sluice-upf/sluice/internal/session"
)

// usageIEs encodes usage reports as the grouped IE of one message:
// ie.NewUsageReportWithin… for a report, a modification or a deletion.
func usageIEs(group func(...*ie.IE) *ie.IE, us []report.Usage) []*ie.IE {
	out := make([]*ie.IE, 0, len(us))
	for _, u := range us {
		kids := []*ie.IE{
			ie.NewURRID(u.URRID),
			ie.NewURSEQN(u.Seq),
			ie.NewUsageReportTrigger(u.Trigger.Octets()...),
			ie.NewStartTime(u.Start),
			ie.NewEndTime(u.End),
		}
		if u.Method&session.MeasVolume != 0 {
			kids = append(kids, volumeMeasurement(u.Volume))
		}
		if u.Method&session.MeasDuration != 0 {
			kids = append(kids, ie.NewDurationMeasurement(u.Duration()))
		}
		out = append(out, group(kids...))
	}
	return out
}

// volumeMeasurement gives octets and packets, total, uplink and downlink
// (§8.2.44: TOVOL, ULVOL, DLVOL, TONOP, ULNOP, DLNOP).
func volumeMeasurement(v datapath.Usage) *ie.IE {
	t := v.Total()
	return ie.NewVolumeMeasurement(0x3f, t.Bytes, v.Uplink.Bytes, v.Downlink.Bytes,
		t.Packets, v.Uplink.Packets, v.Downlink.Packets)
}

// report sends a Session Report Request (§7.5.8) to the session's SMF.
// It returns the request's sequence number; sent is false when there was
// no one to send it to.
func (s *Server) report(seid uint64, ies ...*ie.IE) (seq uint32, sent bool) {
	x, ok := s.store.Get(seid)
	if !ok {
		return 0, false
	}
	a, ok := s.assocs[x.Peer]
	if !ok {
		return 0, false
	}
	return s.reportTo(a.addr, x.CPSEID, append(ies, s.loadIEs(a)...)...)
}

// reportTo sends a Session Report Request for the session the SMF at to
// calls cpSEID.
func (s *Server) reportTo(to netip.AddrPort, cpSEID uint64, ies ...*ie.IE) (seq uint32, sent bool) {
	peer := to.Addr()
	s.request(to, func(n uint32) message.Message {
		seq = n // before the callbacks can run
		return message.NewSessionReportRequest(0, 0, cpSEID, n, 0, ies...)
	}, func(m message.Message) {
		s.reportsOut[peer]--
		s.reportAnswered(seq, cpSEID, m)
	}, func() {
		s.reportsOut[peer]--
		s.reportUnanswered(seq)
	})
	if _, sent = s.pending[seq]; sent {
		s.reportsOut[peer]++
	}
	return seq, sent
}

// maxReportsOut bounds the Session Report Requests in flight to one SMF.
// Usage reports that come due beyond it wait, still counting, and go as
// answers come: a slow SMF gets reports as fast as it answers them, their
// usage all there, and is never buried under retransmissions.
const maxReportsOut = 256

// reportRoom says, for reportDue, whether the SMF of a session may get
// another report now, and if so counts it: what is in flight to the SMF
// and what this tick already gives it stay within maxReportsOut. A
// session whose SMF has no association (lost, in its grace) gets none:
// its usage stays in the meters, for its next report or its final one.
func (s *Server) reportRoom() func(seid uint64) bool {
	given := map[netip.Addr]int{}
	return func(seid uint64) bool {
		x, ok := s.store.Get(seid)
		if !ok {
			return true
		}
		a, ok := s.assocs[x.Peer]
		if !ok {
			return false
		}
		peer := a.addr.Addr()
		if s.reportsOut[peer]+given[peer] >= maxReportsOut {
			return false
		}
		given[peer]++
		return true
	}
}

// sentUsage is what a Session Report Request carries of a session's
// meters, kept by its sequence number until it is answered or given up.
// Its fields are exported for Save.
type sentUsage struct {
	SEID  uint64
	Usage []report.Usage
}

// reportUsage sends usage reports of one session (USAR). Unanswered, they
// go back into the meters: the next report carries their counts.
func (s *Server) reportUsage(seid uint64, us []report.Usage) {
	if len(us) == 0 {
		return
	}
	s.keeper.session(seid) // its meters moved on
	ies := append([]*ie.IE{ie.NewReportType(0, 0, 1, 0)}, usageIEs(ie.NewUsageReportWithinSessionReportRequest, us)...)
	if seq, sent := s.report(seid, ies...); sent {
		s.trackUsage(seq, sentUsage{seid, us})
	}
}

// trackUsage keeps the usage a pending report carries, for the report's
// end and for Save.
func (s *Server) trackUsage(seq uint32, u sentUsage) {
	if s.usageSent == nil {
		s.usageSent = map[uint32]sentUsage{}
	}
	s.usageSent[seq] = u
}

// reportAnswered ends a Session Report Request that the SMF answered.
func (s *Server) reportAnswered(seq uint32, cpSEID uint64, m message.Message) {
	delete(s.usageSent, seq)
	if r, ok := m.(*message.SessionReportResponse); ok && r.Cause != nil {
		if c, _ := r.Cause.Cause(); c != session.CauseAccepted {
			s.log.Info("pfcp: session report refused", "cp_seid", cpSEID, "cause", c)
		}
	}
}

// reportUnanswered ends a Session Report Request given up after N1 sends:
// the usage it carried goes back into its meters, whether this process
// sent it or the one before a restart (Restore).
func (s *Server) reportUnanswered(seq uint32) {
	sent, ok := s.usageSent[seq]
	if !ok {
		return
	}
	delete(s.usageSent, seq)
	s.keeper.session(sent.SEID)
	for _, u := range s.meters.Unreport(sent.SEID, sent.Usage) {
		s.log.Warn("pfcp: usage report unanswered and its URR gone: usage lost", "seid", sent.SEID, "urr", u.URRID,
			"uplink_bytes", u.Volume.Uplink.Bytes, "downlink_bytes", u.Volume.Downlink.Bytes)
	}
}

// reportDue sends the usage reports whose time or volume triggers fired,
// as far as their SMFs have room, and stops the traffic of URRs whose time
// quota ran out.
func (s *Server) reportDue(now time.Time) {
	for seid, us := range s.meters.Due(now, s.reportRoom()) {
		for _, u := range us {
			if u.Trigger&report.TrigTimeQuota == 0 {
				continue
			}
			if op, ok := s.rules.SpendTimeQuota(seid, u.URRID); ok {
				if err := s.dp.Apply([]datapath.Op{op}); err != nil {
					s.log.Error("pfcp: stop traffic at the end of a time quota", "seid", seid, "urr", u.URRID, "err", err)
				}
			}
		}
		s.reportUsage(seid, us)
	}
}

// event acts on one record from the datapath.
func (s *Server) event(ev datapath.Event) {
	now := s.now()
	switch ev.Type {
	case datapath.EventQuota:
		if seid, u, ok := s.meters.QuotaSpent(ev.ID, now); ok {
			s.reportUsage(seid, []report.Usage{u})
		}
	case datapath.EventBuffer, datapath.EventNotify:
		s.downlinkData(ev)
	case datapath.EventUnknownTEID:
		// Rate limited by the datapath (TS 29.281 §7.3.1).
		// From the address the G-PDU came to: the device's side, of the
		// sender's family.
		if s.cfg.GTPU != nil && ev.Peer.IsValid() {
			if err := s.cfg.GTPU.ErrorIndication(sideOfRole(ev.Iface), ev.Peer, ev.TEID); err != nil {
				s.log.Debug("gtpu: send error indication", "to", ev.Peer, "err", err)
			}
		}
	case datapath.EventExtHeader: // rate limited too
		if s.cfg.GTPU != nil && ev.Peer.IsValid() {
			if err := s.cfg.GTPU.SupportedExtensionHeaders(sideOfRole(ev.Iface), ev.Peer); err != nil {
				s.log.Debug("gtpu: send supported extension headers", "to", ev.Peer, "err", err)
			}
		}
	}
}

// downlinkData holds a frame for a session that buffers, and sends the
// Downlink Data Report (§5.2.4.1) for the first frame of a buffering
// period when the FAR asks to be notified (NOCP).
func (s *Server) downlinkData(ev datapath.Event) {
	seid := uint64(ev.Session)
	x, ok := s.store.Get(seid)
	if !ok {
		return
	}
	p, ok := x.PDRs.Get(ev.PDRID)
	if !ok {
		return
	}
	far, _ := x.FARs.Get(p.FARID)
	if ev.Type == datapath.EventBuffer {
		limit := 0
		if far.BARID != nil {
			bar, _ := x.BARs.Get(*far.BARID)
			limit = int(bar.SuggestedPackets)
		}
		s.buffers.Hold(seid, limit, ev.Frame)
	}
	if far.Action&session.ActNocp == 0 || !s.buffers.Notify(seid) {
		return
	}
	info := []*ie.IE{ie.NewPDRID(p.ID)}
	if ev.QFI != 0 {
		info = append(info, ie.NewDownlinkDataServiceInformation(false, true, 0, ev.QFI))
	}
	s.report(seid, ie.NewReportType(0, 0, 0, 1), ie.NewDownlinkDataReport(info...))
}

// afterBuffering ends or keeps a session's buffering after a change: the
// frames go out in order once no FAR buffers, or are dropped (DROBU).
func (s *Server) afterBuffering(c *session.Change) {
	seid := seidOf(c)
	switch {
	case c.Next == nil || c.DropBuffer:
		s.buffers.Discard(seid)
	case !buffering(c.Next):
		for _, f := range s.buffers.Take(seid) {
			if _, err := s.dp.Reinject(f); err != nil {
				s.log.Error("pfcp: send a buffered frame", "seid", seid, "err", err)
			}
		}
	}
}

func buffering(x *session.Session) bool {
	for _, f := range x.FARs.All() {
		if f.Action&session.ActBuff != 0 {
			return true
		}
	}
	return false
}

// finalReports sends every session's usage as the process ends, and waits
// a little for the answers.
func (s *Server) finalReports(in <-chan datagram) {
	now := s.now()
	s.store.Sessions(func(x *session.Session) bool {
		s.reportUsage(x.SEID, s.meters.Close(x.SEID, now))
		return true
	})
	deadline := time.After(min(s.cfg.T1, time.Second))
	for len(s.pending) > 0 {
		s.flush()
		select {
		case d, ok := <-in:
			if !ok {
				return
			}
			s.handle(d)
		case <-deadline:
			return
		}
	}
}

// sendEndMarkers tells the old peer of each path switch that the path is
// done, when the SMF asked (SNDEM, §5.2.3.1): after the switch, so the
// End Marker follows the last G-PDU sent on the old path, and from that
// path's local address (the old FAR's outer source).
func (s *Server) sendEndMarkers(c *session.Change) {
	if s.cfg.GTPU == nil {
		return
	}
	for id, f := range c.Next.FARs.All() {
		old, ok := c.Prev.FARs.Get(id)
		if !ok || f.Forw == nil || !f.Forw.EndMarker || old.Forw == nil || old.Forw.OHC == nil {
			continue
		}
		if f.Forw.OHC != nil && *f.Forw.OHC == *old.Forw.OHC {
			continue
		}
		o := old.Forw.OHC
		if err := s.cfg.GTPU.EndMarker(sideOf(old.Forw.Dest), o.Peer, o.TEID); err != nil {
			s.log.Error("pfcp: send end marker", "seid", c.Next.SEID, "to", o.Peer, "teid", o.TEID, "err", err)
		}
	}
}
