package smf

import (
	"context"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
)

// Rules change the plain session for a check (upflab verify): its MBR,
// its gates, what its URR reports, whether its downlink buffers. The zero
// value is the plain session itself without an MBR. Sessions with rules
// are plain whatever the client's profile: the least every UPF must take.
type Rules struct {
	MBR *Bitrate // the QER's, both ways; nil: none
	// GateClosed closes the QER's gates, uplink and downlink (§8.2.7).
	GateClosed bool
	// URR is what the URR measures and when it reports; nil: plain's,
	// volume reported at deletion only.
	URR *URR
	// Buffer makes the downlink FAR buffer and notify the SMF (BUFF|NOCP)
	// instead of forwarding.
	Buffer bool
	// BufferCount, with Buffer, gives the FAR a BAR that suggests this
	// many frames be buffered (Suggested Buffering Packets Count,
	// §8.2.67); 0: no BAR, the UPF's own bound.
	BufferCount uint8
}

// URR is a URR's measurement and reporting triggers (§8.2.19), all on the
// total volume. A zero field sets no trigger.
type URR struct {
	Period       time.Duration // PERIO: a report every period, whole seconds
	VolThreshold uint64        // VOLTH: a report each time this many bytes have passed since the last
	VolQuota     uint64        // VOLQU: bytes that may pass, then none
	TimeQuota    time.Duration // TIMQU: how long traffic may pass, whole seconds (measured as duration too)
}

// Reporting Triggers (§8.2.19) and Measurement Method (§8.2.40) bits.
const (
	trigOctet6VolQuota  = 0x01 // VOLQU, octet 6
	trigOctet6TimeQuota = 0x02 // TIMQU, octet 6
	measDuration        = 1    // DURAT
	measVolume          = 1    // VOLUM
)

// ies are the Create URR IE's children after the URR ID.
func (u *URR) ies() []*ie.IE {
	var trig5, trig6 uint8
	var out []*ie.IE
	if u.Period > 0 {
		trig5 |= trigPeriodic
		out = append(out, ie.NewMeasurementPeriod(u.Period))
	}
	if u.VolThreshold > 0 {
		trig5 |= trigVolume
		out = append(out, ie.NewVolumeThreshold(0x01, u.VolThreshold, 0, 0))
	}
	if u.VolQuota > 0 {
		trig6 |= trigOctet6VolQuota
		out = append(out, ie.NewVolumeQuota(0x01, u.VolQuota, 0, 0))
	}
	duration := 0
	if u.TimeQuota > 0 {
		trig6 |= trigOctet6TimeQuota
		duration = measDuration
		out = append(out, ie.NewTimeQuota(u.TimeQuota))
	}
	return append([]*ie.IE{ie.NewMeasurementMethod(0, measVolume, duration), ie.NewReportingTriggers(trig5, trig6)}, out...)
}

// EstablishWith establishes n new plain sessions with rules r, as
// Establish does. A UPF that refuses the rules answers each with a cause:
// the phase counts them, and its error wraps the first as a *CauseError.
func (c *Client) EstablishWith(ctx context.Context, n int, r Rules) ([]Session, Phase, error) {
	c.turn.Lock()
	defer c.turn.Unlock()
	p := plain{cfg: &c.cfg}
	fresh, err := c.newSessionsOf(p, n)
	if err != nil {
		return nil, Phase{}, err
	}
	phase, err := c.run(ctx, "establish with rules", fresh, func(s *Session) *op {
		o := c.establishment(s)
		o.msg = c.establishmentRequest(s, p.withRules(s, r))
		return o
	})
	c.releaseUnestablished(fresh)
	var out []Session
	c.mu.Lock()
	for _, s := range fresh {
		if s.established {
			out = append(out, *s)
		}
	}
	c.mu.Unlock()
	return out, phase, err
}

// Forward makes the downlink FAR of the sessions given (by CP SEID), made
// with Rules.Buffer, forward again, as an SMF does once the UE is
// reachable: the UPF sends what it buffered (§5.2.4.2).
func (c *Client) Forward(ctx context.Context, sessions []Session) (Phase, error) {
	c.turn.Lock()
	defer c.turn.Unlock()
	return c.run(ctx, "forward", c.mine(sessions), func(s *Session) *op {
		return &op{sess: s, msg: modification(s, []*ie.IE{
			ie.NewUpdateFAR(ie.NewFARID(plainDownlinkFAR), ie.NewApplyAction(actionForward)),
		})}
	})
}
