package decode

import (
	"time"

	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/internal/session"
)

// urrFields are what a Create or Update URR says (§7.5.2.4, §7.5.4.4).
type urrFields struct {
	session.URRUpdate
	mbqe bool
}

var urrTable = fields(
	one(ie.URRID, func(u *urrFields, k *ie.IE) (err error) { u.ID, err = k.URRID(); return }),
	one(ie.MeasurementMethod, func(u *urrFields, k *ie.IE) error {
		m, err := k.MeasurementMethod()
		u.Method = &m
		return err
	}),
	one(ie.ReportingTriggers, func(u *urrFields, k *ie.IE) error {
		b, err := k.ReportingTriggers()
		if err == nil {
			t := triggers(b)
			u.Triggers = &t
		}
		return err
	}),
	one(ie.MeasurementPeriod, func(u *urrFields, k *ie.IE) (err error) { u.Period, err = seconds(k.MeasurementPeriod); return }),
	one(ie.VolumeThreshold, func(u *urrFields, k *ie.IE) error {
		f, err := k.VolumeThreshold()
		if err == nil {
			u.VolThreshold = volume(f.Flags, f.TotalVolume, f.UplinkVolume, f.DownlinkVolume)
		}
		return err
	}),
	one(ie.VolumeQuota, func(u *urrFields, k *ie.IE) error {
		f, err := k.VolumeQuota()
		if err == nil {
			u.VolQuota = volume(f.Flags, f.TotalVolume, f.UplinkVolume, f.DownlinkVolume)
		}
		return err
	}),
	one(ie.TimeThreshold, func(u *urrFields, k *ie.IE) (err error) { u.TimeThreshold, err = seconds(k.TimeThreshold); return }),
	one(ie.TimeQuota, func(u *urrFields, k *ie.IE) (err error) { u.TimeQuota, err = seconds(k.TimeQuota); return }),
	one(ie.QuotaHoldingTime, func(u *urrFields, k *ie.IE) (err error) { u.QuotaHolding, err = seconds(k.QuotaHoldingTime); return }),
	one(ie.QuotaValidityTime, func(u *urrFields, k *ie.IE) (err error) {
		u.QuotaValidity, err = seconds(k.QuotaValidityTime)
		return
	}),
	one(ie.MeasurementInformation, func(u *urrFields, k *ie.IE) error {
		u.mbqe = len(k.Payload) > 0 && k.Payload[0]&0x01 != 0
		return nil
	}),
)

// urrRefused are the IEs of a Create or Update URR the UPF does not act on.
var urrRefused = []uint16{ie.EventThreshold, ie.EventQuota, ie.DroppedDLTrafficThreshold, ie.MonitoringTime, ie.SubsequentVolumeThreshold, ie.SubsequentTimeThreshold,
	ie.SubsequentVolumeQuota, ie.SubsequentTimeQuota, ie.SubsequentEventThreshold, ie.SubsequentEventQuota,
	ie.InactivityDetectionTime, ie.LinkedURRID, ie.TimeQuotaMechanism, ie.AggregatedURRs, ie.FARID,
	ie.EthernetInactivityTimer, ie.AdditionalMonitoringTime, ie.NumberOfReports}

var (
	createURRGroup = group[urrFields]{name: "Create URR", fields: urrTable,
		mandatory: []uint16{ie.URRID, ie.MeasurementMethod, ie.ReportingTriggers}, refused: urrRefused}
	updateURRGroup = group[urrFields]{name: "Update URR", fields: urrTable, mandatory: []uint16{ie.URRID}, refused: urrRefused}
)

// createURR reads a Create URR: its fields, with the measurement method
// and reporting triggers mandatory.
func createURR(i *ie.IE) (session.URR, *session.Error) {
	f, e := grouped(&createURRGroup, i)
	if e != nil {
		return session.URR{}, e
	}
	u := session.URR{MBQE: f.mbqe}
	f.ApplyTo(&u)
	return u, nil
}

func updateURR(i *ie.IE) (session.URRUpdate, *session.Error) {
	f, e := grouped(&updateURRGroup, i)
	return f.URRUpdate, e
}

func seconds(get func() (time.Duration, error)) (*uint32, error) {
	d, err := get()
	if err != nil {
		return nil, err
	}
	s := uint32(d.Seconds())
	return &s, nil
}

// triggers packs the Reporting Triggers octets (§8.2.41), first octet
// highest, into one number.
func triggers(b []byte) uint32 {
	var v uint32
	for _, o := range b[:min(len(b), 3)] {
		v = v<<8 | uint32(o)
	}
	return v << (8 * (3 - min(len(b), 3)))
}

// volume reads the TOVOL/ULVOL/DLVOL fields that the flags say are there.
func volume(flags uint8, total, ul, dl uint64) *session.Volume {
	v := &session.Volume{}
	if flags&0x01 != 0 {
		v.Total = &total
	}
	if flags&0x02 != 0 {
		v.Uplink = &ul
	}
	if flags&0x04 != 0 {
		v.Downlink = &dl
	}
	return v
}
