package decode

import (
	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/internal/session"
)

// qerFields are the IEs of a Create or Update QER (§7.5.2.5, §7.5.4.5).
var qerFields = fields(
	one(ie.QERID, func(u *session.QERUpdate, k *ie.IE) (err error) { u.ID, err = k.QERID(); return }),
	one(ie.GateStatus, func(u *session.QERUpdate, k *ie.IE) error {
		ul, err := k.GateStatusUL()
		if err != nil {
			return err
		}
		dl, err := k.GateStatusDL()
		u.GateUL, u.GateDL = &ul, &dl
		return err
	}),
	one(ie.MBR, func(u *session.QERUpdate, k *ie.IE) error {
		ul, dl, err := bitRates(k.MBRUL, k.MBRDL)
		u.MBRUL, u.MBRDL = &ul, &dl
		return err
	}),
	one(ie.GBR, func(u *session.QERUpdate, k *ie.IE) error {
		ul, dl, err := bitRates(k.GBRUL, k.GBRDL)
		u.GBRUL, u.GBRDL = &ul, &dl
		return err
	}),
	one(ie.QFI, func(u *session.QERUpdate, k *ie.IE) error {
		q, err := k.QFI()
		u.QFI = &q
		return err
	}),
	one(ie.RQI, func(u *session.QERUpdate, k *ie.IE) error {
		r, err := k.RQI()
		b := r&1 != 0
		u.RQI = &b
		return err
	}),
)

// qerRefused are the IEs of a Create or Update QER the UPF does not act on.
var qerRefused = []uint16{ie.QERCorrelationID, ie.PacketRate, ie.DLFlowLevelMarking, ie.PagingPolicyIndicator,
	ie.AveragingWindow, ie.QERControlIndications}

var (
	createQERGroup = group[session.QERUpdate]{name: "Create QER", fields: qerFields, mandatory: []uint16{ie.QERID, ie.GateStatus},
		refused: qerRefused}
	updateQERGroup = group[session.QERUpdate]{name: "Update QER", fields: qerFields, mandatory: []uint16{ie.QERID}, refused: qerRefused}
)

// createQER reads a Create QER: its fields, with the gate mandatory.
func createQER(i *ie.IE) (session.QER, *session.Error) {
	var q session.QER
	u, e := grouped(&createQERGroup, i)
	if e != nil {
		return q, e
	}
	u.ApplyTo(&q)
	return q, nil
}

func updateQER(i *ie.IE) (session.QERUpdate, *session.Error) { return grouped(&updateQERGroup, i) }

// bitRates reads an MBR or GBR: kbit/s on the wire (§8.2.8), bit/s here.
func bitRates(ul, dl func() (uint64, error)) (uint64, uint64, error) {
	u, err := ul()
	if err != nil {
		return 0, 0, err
	}
	d, err := dl()
	return u * 1000, d * 1000, err
}
