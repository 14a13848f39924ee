package report

import (
	"fmt"
	"strconv"
	"strings"
)

// WebLoad is the subscriber model with real connections at one count:
// HTTP over TCP and UDP flows, both directions at once.
type WebLoad struct {
	Subscribers int          `json:"subscribers"`
	Seconds     float64      `json:"seconds"`
	Uplink      WebDirection `json:"uplink"`
	Downlink    WebDirection `json:"downlink"`
	// Fetches are the HTTP exchanges completed, FailedFetches those that
	// ended in an error, and the percentiles the time of each exchange
	// from its request to the last byte of its answer: the download time.
	Fetches       int     `json:"fetches"`
	FailedFetches int     `json:"failed_fetches"`
	FetchP50Ms    float64 `json:"fetch_p50_ms"`
	FetchP99Ms    float64 `json:"fetch_p99_ms"`
	CPU           *CPU    `json:"cpu,omitempty"`
	// Ceiling is the same without tunnel or UPF (lab/gnb's direct link).
	Ceiling *WebLoad `json:"ceiling,omitempty"`
}

// WebDirection is one direction of a web load: upload or download speed
// (HTTP bodies and UDP payloads received, per second), UDP's loss and
// TCP's retransmissions.
type WebDirection struct {
	Direction   string  `json:"direction"`
	Gbps        float64 `json:"gbps"`         // received: HTTP and UDP payload
	HTTPGbps    float64 `json:"http_gbps"`    // of which HTTP
	OfferedGbps float64 `json:"offered_gbps"` // the model's, HTTP and UDP
	UDPSent     uint64  `json:"udp_sent"`
	UDPReceived uint64  `json:"udp_received"`
	LossPct     float64 `json:"loss_pct"`    // UDP datagrams lost, of those sent
	Retransmits uint64  `json:"retransmits"` // TCP segments the senders of this direction sent again
	// RatioToCeiling is Gbps over the ceiling's.
	RatioToCeiling *float64 `json:"ratio_to_ceiling,omitempty"`
}

// webKind writes the model's speeds and losses at each count, as seed
// 003's Table II, with the download times and the ceiling.
type webKind struct{}

func (webKind) has(s *Step) bool { return len(s.Web) > 0 }

// AddWeb adds the model's results at some counts to the step h, with
// each direction's ratio to the ceiling.
func (r *Run) AddWeb(h Header, loads ...WebLoad) {
	s := r.step(h)
	for _, l := range loads {
		if c := l.Ceiling; c != nil {
			l.Uplink.RatioToCeiling = over(l.Uplink.Gbps, c.Uplink.Gbps, true)
			l.Downlink.RatioToCeiling = over(l.Downlink.Gbps, c.Downlink.Gbps, true)
		}
		s.Web = append(s.Web, l)
	}
}

// The footnotes of the web table.
const (
	webSpeedNote = "HTTP bodies and UDP payloads received per second, all subscribers together; the loss is UDP's, datagrams lost of those sent, as seed 003 writes it."
	webOfferNote = "What arrived in % of what the model offers: below 100 %, the subscribers' TCP got less than its rate, or this machine could not send the load."
	webFetchNote = "Each HTTP exchange, from its request to the last byte of its answer: p50 / p99, and how many ended in an error."
	webRetxNote  = "TCP segments sent again, by the UEs (up) and by the web server (down)."
)

func (webKind) section(b *strings.Builder, run *Run) {
	stepTables(b, run, webTable, webSpeedNote, webOfferNote, webFetchNote, webRetxNote)
}

func (webKind) text(b *strings.Builder, run *Run) {
	stepTablesText(b, run, webTable, webSpeedNote, webOfferNote, webFetchNote, webRetxNote)
}

// webTable has a row per subscriber count, and the ceiling's below.
func webTable(s Step) *table {
	t := &table{left: 2, header: []string{"Subscribers", "", "upload speed(Gbps)", "upload packet loss", "download speed(Gbps)",
		"download packet loss", "of the model<br>up / down[2]", "download time ms[3]<br>p50 / p99 (failed)",
		"TCP retransmits<br>up / down[4]", "CPU %", "x ceiling<br>up / down"}}
	for _, l := range s.Web {
		t.add(webCells(l, "UPF", cpuText(l.CPU))...)
		if c := l.Ceiling; c != nil {
			t.add(webCells(*c, "ceiling", "")...)
		}
	}
	return t
}

func webCells(l WebLoad, through, cpu string) []string {
	return []string{strconv.Itoa(l.Subscribers), through, f2(l.Uplink.Gbps), seedLoss(l.Uplink.LossPct),
		f2(l.Downlink.Gbps), seedLoss(l.Downlink.LossPct),
		ofOffered(l.Uplink) + " / " + ofOffered(l.Downlink),
		fmt.Sprintf("%s / %s (%d)", f1(l.FetchP50Ms), f1(l.FetchP99Ms), l.FailedFetches),
		fmt.Sprintf("%d / %d", l.Uplink.Retransmits, l.Downlink.Retransmits), cpu,
		ratioText(l.Uplink.RatioToCeiling) + " / " + ratioText(l.Downlink.RatioToCeiling)}
}

func ofOffered(d WebDirection) string {
	if d.OfferedGbps == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*d.Gbps/d.OfferedGbps)
}

func (webKind) rows(s Step) []row {
	var rows []row
	for _, l := range s.Web {
		rows = append(rows, webRows(l, "upf")...)
		if l.Ceiling != nil {
			rows = append(rows, webRows(*l.Ceiling, "direct")...)
		}
	}
	return rows
}

func webRows(l WebLoad, through string) []row {
	var rows []row
	for _, d := range []WebDirection{l.Uplink, l.Downlink} {
		r := row{"through": through, "direction": d.Direction, "subscribers": strconv.Itoa(l.Subscribers),
			"seconds": num(l.Seconds), "tx_packets": count(d.UDPSent), "rx_packets": count(d.UDPReceived),
			"rx_gbps": num(d.Gbps), "loss_pct": num(d.LossPct), "retransmits": count(d.Retransmits),
			"fetches": strconv.Itoa(l.Fetches), "failed": strconv.Itoa(l.FailedFetches),
			"fetch_p50_ms": num(l.FetchP50Ms), "fetch_p99_ms": num(l.FetchP99Ms)}
		if l.CPU != nil {
			r["cpu_pct"] = num(l.CPU.TotalPct)
		}
		if d.RatioToCeiling != nil {
			r["ratio_to_ceiling"] = num(*d.RatioToCeiling)
		}
		rows = append(rows, r)
	}
	return rows
}

// compare keeps seed 003's columns, a row per run and count, and the
// download time.
func (webKind) compare(b *strings.Builder, rows []compared, ratio string) {
	t := &table{header: []string{"Subscribers", "#", "UPF / Date", "upload speed(Gbps)", "upload packet loss",
		"download speed(Gbps)", "download packet loss", ratio + "<br>up", ratio + "<br>down", "download time ms<br>p50 / p99"}}
	loads := func(s *Step) map[int]WebLoad {
		out := map[int]WebLoad{}
		if s != nil {
			for _, l := range s.Web {
				out[l.Subscribers] = l
			}
		}
		return out
	}
	first := loads(rows[0].step)
	for _, f := range rows[0].step.Web {
		n := f.Subscribers
		for _, r := range rows {
			l, ok := loads(r.step)[n]
			if !ok {
				t.add(strconv.Itoa(n), r.label, upfDate(r.run), "–", "", "", "", "", "", "")
				continue
			}
			t.add(strconv.Itoa(n), r.label, upfDate(r.run), f2(l.Uplink.Gbps), seedLoss(l.Uplink.LossPct),
				f2(l.Downlink.Gbps), seedLoss(l.Downlink.LossPct),
				ratioText(over(l.Uplink.Gbps, first[n].Uplink.Gbps, true)), ratioText(over(l.Downlink.Gbps, first[n].Downlink.Gbps, true)),
				f1(l.FetchP50Ms)+" / "+f1(l.FetchP99Ms))
		}
	}
	t.write(b)
}
