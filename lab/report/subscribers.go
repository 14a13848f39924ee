package report

import (
	"fmt"
	"strconv"
	"strings"
)

// SubscriberLoad is the subscriber model at one count: both directions at
// once. Upload and download speed are the Rx rates.
type SubscriberLoad struct {
	Subscribers int         `json:"subscribers"`
	Uplink      Measurement `json:"uplink"`
	Downlink    Measurement `json:"downlink"`
	CPU         *CPU        `json:"cpu,omitempty"` // of both directions together
}

// subscribersKind writes the model's results at each count, both
// directions, beside the reference forwarder's.
type subscribersKind struct{}

func (subscribersKind) has(s *Step) bool { return len(s.Subscribers) > 0 }

// AddSubscribers adds the model's results at some counts to the step h.
func (r *Run) AddSubscribers(h Header, loads ...SubscriberLoad) {
	s := r.step(h)
	for _, l := range loads {
		l.Uplink.RatioToReference, l.Uplink.RatioSpread = PacketRatio(l.Uplink, l.Uplink.Reference)
		l.Downlink.RatioToReference, l.Downlink.RatioSpread = PacketRatio(l.Downlink, l.Downlink.Reference)
		s.Subscribers = append(s.Subscribers, l)
	}
}

// section gives each subscribers step the columns of seed 003's Table II.
func (subscribersKind) section(b *strings.Builder, run *Run) {
	stepTables(b, run, subscribersTable, sentNote, cpuNote, ratioNote)
}

func (subscribersKind) text(b *strings.Builder, run *Run) {
	stepTablesText(b, run, subscribersTable, sentNote, cpuNote, textRatioNote)
}

// subscribersTable has the columns of seed 003's Table II, a row per
// subscriber count.
func subscribersTable(s Step) *table {
	t := &table{header: []string{"Subscribers", "upload speed(Gbps)", "upload packet loss",
		"download speed(Gbps)", "download packet loss", "sent of the model<br>up / down[1]", "CPU %[2]",
		"x ref<br>up[3]", "x ref<br>down[3]"}}
	for _, l := range s.Subscribers {
		t.add(strconv.Itoa(l.Subscribers), f2(l.Uplink.RxGbps), seedLoss(l.Uplink.LossPct),
			f2(l.Downlink.RxGbps), seedLoss(l.Downlink.LossPct),
			sentOfOffered(l.Uplink)+" / "+sentOfOffered(l.Downlink), cpuText(l.CPU),
			ownRatio(l.Uplink), ownRatio(l.Downlink))
	}
	return t
}

// sentNote explains sentOfOffered: a loss of 0 % means little when the
// generator could not offer the load.
const sentNote = "What the generator sent, in % of the packet rate the model offers. Below 100 %, this machine could not offer the whole load; the loss is of what was sent."

func sentOfOffered(m Measurement) string {
	if m.OfferedKpps == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f%%", 100*m.TxKpps/m.OfferedKpps)
}

// seedLoss writes a loss as seed 003 does: 0.02150%.
func seedLoss(pct float64) string { return fmt.Sprintf("%.5f%%", pct) }

func (subscribersKind) rows(s Step) []row {
	var rows []row
	for _, l := range s.Subscribers {
		for _, m := range []Measurement{l.Uplink, l.Downlink} {
			rows = append(rows, measurementRows(m, row{"subscribers": strconv.Itoa(l.Subscribers)})...)
		}
	}
	return rows
}

// compare keeps seed 003's columns, a row per run and count.
func (subscribersKind) compare(b *strings.Builder, rows []compared, ratio string) {
	t := &table{header: []string{"Subscribers", "#", "UPF / Date", "upload speed(Gbps)", "upload packet loss",
		"download speed(Gbps)", "download packet loss", ratio + "<br>up", ratio + "<br>down"}}
	loads := func(r compared) map[int]SubscriberLoad {
		out := map[int]SubscriberLoad{}
		if r.step != nil {
			for _, l := range r.step.Subscribers {
				out[l.Subscribers] = l
			}
		}
		return out
	}
	first := loads(rows[0])
	var counts []int
	for _, l := range rows[0].step.Subscribers {
		counts = append(counts, l.Subscribers)
	}
	for _, n := range counts {
		for _, r := range rows {
			l, ok := loads(r)[n]
			if !ok {
				missing := "no such count"
				if r.step == nil {
					missing = "no such step"
				}
				t.add(strconv.Itoa(n), r.label, upfDate(r.run), missing, "", "", "", "", "")
				continue
			}
			f := first[n]
			t.add(strconv.Itoa(n), r.label, upfDate(r.run), f2(l.Uplink.RxGbps), seedLoss(l.Uplink.LossPct),
				f2(l.Downlink.RxGbps), seedLoss(l.Downlink.LossPct), versusFirst(&l.Uplink, &f.Uplink), versusFirst(&l.Downlink, &f.Downlink))
		}
	}
	t.write(b)
	fmt.Fprintf(b, "%s\n\n", versusNote(rows[0].label))
}

// plots stack throughput over loss, against the subscriber count, with the
// reference forwarder's dashed where it was measured (seed 003's figures).
func (subscribersKind) plots(s Step, file func(string) string) []Plot {
	var up, down, refUp, refDown loadPoints
	for _, l := range s.Subscribers {
		x := float64(l.Subscribers)
		up.add(x, &l.Uplink)
		down.add(x, &l.Downlink)
		refUp.add(x, l.Uplink.Reference)
		refDown.add(x, l.Downlink.Reference)
	}
	// Rates count frames as they arrive: a UPF's downlink ones are G-PDUs,
	// their bits the tunnel's headers too; the reference forwarder passes
	// frames as sent, so its uplink ones are.
	speeds := []series{{name: "upload", points: up.gbps}, {name: "download, with the GTP-U tunnel", points: down.gbps, color: 1}}
	losses := []series{{name: "upload", points: up.loss}, {name: "download", points: down.loss, color: 1}}
	if len(refUp.gbps)+len(refDown.gbps) > 0 {
		speeds = append(speeds, series{name: "upload, reference forwarder, with the tunnel", points: refUp.gbps, dashed: true},
			series{name: "download, reference forwarder", points: refDown.gbps, color: 1, dashed: true})
		losses = append(losses, series{name: "upload, reference forwarder", points: refUp.loss, dashed: true},
			series{name: "download, reference forwarder", points: refDown.loss, color: 1, dashed: true})
	}
	title := "Throughput and packet loss by subscribers: " + s.Name
	return []Plot{{File: file("load"), Title: title, charts: []chart{
		{title: "Throughput: " + s.Name, xLabel: "subscribers", yLabel: "Gbps, frames as received", series: speeds},
		{title: "Packet loss: " + s.Name, xLabel: "subscribers", yLabel: "loss (%)", series: losses},
	}}}
}

// loadPoints are one direction's rates and losses by subscriber count.
type loadPoints struct{ gbps, loss []point }

// add puts m's rate and loss at x, if there is m.
func (p *loadPoints) add(x float64, m *Measurement) {
	if m != nil {
		p.gbps, p.loss = append(p.gbps, point{x, m.RxGbps}), append(p.loss, point{x, m.LossPct})
	}
}
