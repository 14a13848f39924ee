package smf

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"
)

// Usage is one usage report (§8.2.44, Volume Measurement): what a URR
// counted since its last report, as the UPF says.
type Usage struct {
	CPSEID   uint64 // the session, ours
	URRID    uint32
	Seq      uint32  // UR-SEQN
	Trigger  Trigger // why it reported
	Uplink   Volume
	Downlink Volume
	At       time.Time // when it reached us
}

// Volume is bytes and packets one way.
type Volume struct{ Bytes, Packets uint64 }

// Trigger is a Usage Report Trigger (§8.2.41), octets 5 to 7 as one
// number, the first octet highest.
type Trigger uint32

// The Usage Report Triggers the checks look for.
const (
	TrigPeriodic     Trigger = 1 << 16 // PERIO
	TrigVolThreshold Trigger = 1 << 17 // VOLTH
	TrigVolQuota     Trigger = 1 << 8  // VOLQU
	TrigTimeQuota    Trigger = 1 << 9  // TIMQU
	TrigTermination  Trigger = 1 << 11 // TERMR
)

// Report is a Session Report Request, as far as the checks read it.
type Report struct {
	CPSEID       uint64
	Usage        []Usage
	DownlinkData bool // a Downlink Data Report (DLDR): downlink buffered
	At           time.Time
}

// OnReport calls f with every Session Report Request from now on, as the
// client answers it; nil stops. f runs on the client's reader: it must
// not wait for the client.
func (c *Client) OnReport(f func(Report)) {
	c.mu.Lock()
	c.onReport = f
	c.mu.Unlock()
}

// noteReport hands a Session Report Request to OnReport's function.
func (c *Client) noteReport(r *message.SessionReportRequest, at time.Time) {
	c.mu.Lock()
	f := c.onReport
	c.mu.Unlock()
	if f == nil {
		return
	}
	x := Report{CPSEID: r.SEID(), DownlinkData: r.DownlinkDataReport != nil, At: at}
	x.Usage, _ = usageOf(r.SEID(), r.UsageReport, at) // an undecodable report is none
	f(x)
}

// usageOf reads the Usage Report IEs of a message about session cpSEID.
func usageOf(cpSEID uint64, reports []*ie.IE, at time.Time) ([]Usage, error) {
	var out []Usage
	for _, r := range reports {
		kids, err := r.UsageReport()
		if err != nil {
			return out, err
		}
		u := Usage{CPSEID: cpSEID, At: at}
		if err := u.read(kids); err != nil {
			return out, err
		}
		out = append(out, u)
	}
	return out, nil
}

// read fills u from a Usage Report's IEs.
func (u *Usage) read(kids []*ie.IE) error {
	var errs []error
	for _, k := range kids {
		var err error
		switch k.Type {
		case ie.URRID:
			u.URRID, err = k.URRID()
		case ie.URSEQN:
			u.Seq, err = k.URSEQN()
		case ie.UsageReportTrigger:
			var b []byte
			if b, err = k.UsageReportTrigger(); err == nil {
				for _, octet := range append(b, 0, 0, 0)[:3] {
					u.Trigger = u.Trigger<<8 | Trigger(octet)
				}
			}
		case ie.VolumeMeasurement:
			var v *ie.VolumeMeasurementFields
			if v, err = k.VolumeMeasurement(); err == nil {
				u.Uplink = Volume{Bytes: v.UplinkVolume, Packets: v.UplinkNumberOfPackets}
				u.Downlink = Volume{Bytes: v.DownlinkVolume, Packets: v.DownlinkNumberOfPackets}
			}
		}
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("usage report: %w", err)
	}
	return nil
}

// DeleteSessions deletes the sessions given (by CP SEID) and returns the
// usage reports of the Session Deletion Responses: each URR's final one.
func (c *Client) DeleteSessions(ctx context.Context, sessions []Session) (Phase, []Usage, error) {
	c.turn.Lock()
	defer c.turn.Unlock()
	mine := c.mine(sessions)
	var final []Usage
	phase, err := c.run(ctx, "delete", mine, func(s *Session) *op {
		o := c.deletion(s)
		deleted := o.onAccept
		o.onAccept = func(m message.Message) error {
			us, err := usageOf(s.CPSEID, m.(*message.SessionDeletionResponse).UsageReport, time.Now())
			final = append(final, us...) // on the batch's goroutine, one at a time
			return errors.Join(err, deleted(m))
		}
		return o
	})
	return phase, final, err
}
