package decode

import (
	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/internal/session"
)

// barGroup is a Create BAR (§7.5.2.6).
var barGroup = group[session.BAR]{
	name: "Create BAR",
	fields: fields(
		one(ie.BARID, func(b *session.BAR, k *ie.IE) (err error) { b.ID, err = k.BARID(); return }),
		one(ie.SuggestedBufferingPacketsCount, func(b *session.BAR, k *ie.IE) error {
			n, err := k.SuggestedBufferingPacketsCount()
			b.SuggestedPackets = uint32(n)
			return err
		}),
	),
	mandatory: []uint16{ie.BARID},
	refused:   []uint16{ie.DownlinkDataNotificationDelay, ie.MTEDTControlInformation},
}

func createBAR(i *ie.IE) (session.BAR, *session.Error) { return grouped(&barGroup, i) }
