package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Iperf is one iperf3 measurement with real UEs: one protocol one way,
// from some UEs at once, each its own client and server, as the SD-Core
// study's table gives it.
type Iperf struct {
	Protocol  string `json:"protocol"`  // tcp or udp
	Direction string `json:"direction"` // uplink or downlink
	UEs       int    `json:"ues"`
	Streams   int    `json:"streams"` // per UE (iperf3 -P)
	// MBRMbps is the MBR the UEs' sessions had, each way; 0: none.
	MBRMbps float64 `json:"mbr_mbps,omitempty"`
	Seconds float64 `json:"seconds"`
	// Mbps is the goodput the receivers counted, all UEs together, and
	// PerUEMbps each UE's.
	Mbps      float64   `json:"goodput_mbps"`
	PerUEMbps []float64 `json:"per_ue_mbps"`
	// Retransmits are TCP's, the senders'; LossPct is UDP's datagrams
	// lost of those sent.
	Retransmits uint64  `json:"retransmits"`
	LossPct     float64 `json:"loss_pct"`
	CPU         *CPU    `json:"cpu,omitempty"` // the UPF's, and every core's
	// Ceiling is the same load with the same UEs and servers joined
	// straight to the DN, and RatioToCeiling this goodput over its.
	Ceiling        *Iperf   `json:"ceiling,omitempty"`
	RatioToCeiling *float64 `json:"ratio_to_ceiling,omitempty"`
	// OfMBR is the goodput over the MBR, when there was one.
	OfMBR *float64 `json:"of_mbr,omitempty"`
}

// iperfKind writes iperf3's goodput, retransmissions and CPU beside the
// ceiling, in the shape of the SD-Core study's table.
type iperfKind struct{}

func (iperfKind) has(s *Step) bool { return len(s.Iperf) > 0 }

// AddIperf adds measurements to the step h, with their ratios to the
// ceiling and the MBR.
func (r *Run) AddIperf(h Header, results ...Iperf) {
	s := r.step(h)
	for _, x := range results {
		if x.Ceiling != nil && x.Ceiling.Mbps > 0 {
			v := x.Mbps / x.Ceiling.Mbps
			x.RatioToCeiling = &v
		}
		if x.MBRMbps > 0 {
			v := x.Mbps / x.MBRMbps
			x.OfMBR = &v
		}
		s.Iperf = append(s.Iperf, x)
	}
}

// The footnotes of the iperf table.
const (
	iperfGoodputNote = "What the receivers counted, all UEs together (iperf3's receiver figures), and each UE's: min / median / max."
	iperfLossNote    = "TCP: the senders' retransmitted segments. UDP: datagrams lost, in % of those sent."
	ceilingNote      = "The same UEs, servers and load joined straight to the DN (lab/gnb's direct link), without tunnel, gNB or UPF, measured in the same run; x ceiling is the goodput over it."
)

// iperfTable has a row per step and direction.
func iperfTable(run *Run) *table {
	t := &table{left: 2, header: []string{"#", "Step", "UEs × streams", "Protocol", "MBR<br>Mbit/s", "Direction",
		"Goodput Mbit/s[1]<br>per UE", "Retransmits /<br>loss %[2]", "CPU %", "Ceiling<br>Mbit/s[3]", "x ceiling", "of MBR"}}
	for i, s := range run.Steps {
		for _, x := range s.Iperf {
			ceiling := "–"
			if x.Ceiling != nil {
				ceiling = f1(x.Ceiling.Mbps)
			}
			t.add(strconv.Itoa(i+1), cell(s.Name), fmt.Sprintf("%d × %d", x.UEs, x.Streams), x.Protocol, mbrText(x.MBRMbps),
				x.Direction, f1(x.Mbps)+"<br>"+spreadText(x.PerUEMbps), iperfLossText(x), cpuText(x.CPU),
				ceiling, ratioText(x.RatioToCeiling), ratioText(x.OfMBR))
		}
	}
	return t
}

func (iperfKind) section(b *strings.Builder, run *Run) {
	if t := iperfTable(run); len(t.rows) > 0 {
		t.write(b)
		fmt.Fprintf(b, "1. %s\n2. %s\n3. %s\n\n", iperfGoodputNote, iperfLossNote, ceilingNote)
	}
}

func (iperfKind) text(b *strings.Builder, run *Run) {
	if t := iperfTable(run); len(t.rows) > 0 {
		t.writeText(b, "[1] "+iperfGoodputNote, "[2] "+iperfLossNote, "[3] "+ceilingNote)
	}
}

func mbrText(mbps float64) string {
	if mbps == 0 {
		return "–"
	}
	return strconv.FormatFloat(mbps, 'f', -1, 64)
}

func iperfLossText(x Iperf) string {
	if x.Protocol == "udp" {
		return lossText(x.LossPct) + " %"
	}
	return strconv.FormatUint(x.Retransmits, 10)
}

// spreadText is the least, the median and the most of a list.
func spreadText(list []float64) string {
	if len(list) == 0 {
		return ""
	}
	s := slices.Sorted(slices.Values(list))
	return f1(s[0]) + " / " + f1(s[len(s)/2]) + " / " + f1(s[len(s)-1])
}

func (iperfKind) rows(s Step) []row {
	var rows []row
	for _, x := range s.Iperf {
		rows = append(rows, iperfRow(x, "upf"))
		if x.Ceiling != nil {
			rows = append(rows, iperfRow(*x.Ceiling, "direct"))
		}
	}
	return rows
}

func iperfRow(x Iperf, through string) row {
	r := row{"through": through, "direction": x.Direction, "protocol": x.Protocol, "ues": strconv.Itoa(x.UEs),
		"streams": strconv.Itoa(x.Streams), "seconds": num(x.Seconds), "goodput_mbps": num(x.Mbps),
		"retransmits": count(x.Retransmits), "loss_pct": num(x.LossPct)}
	if x.MBRMbps > 0 {
		r["mbr_mbps"] = num(x.MBRMbps)
	}
	if x.CPU != nil {
		r["cpu_pct"] = num(x.CPU.TotalPct)
	}
	if x.RatioToCeiling != nil {
		r["ratio_to_ceiling"] = num(*x.RatioToCeiling)
	}
	if x.OfMBR != nil {
		r["of_mbr"] = num(*x.OfMBR)
	}
	return r
}

// iperfKey names a measurement within its step.
func iperfKey(x Iperf) string {
	key := fmt.Sprintf("%d × %d %s %s", x.UEs, x.Streams, x.Protocol, x.Direction)
	if x.MBRMbps > 0 {
		key += ", MBR " + mbrText(x.MBRMbps)
	}
	return key
}

// compare sets each measurement's goodput side by side, a row per run.
func (iperfKind) compare(b *strings.Builder, rows []compared, ratio string) {
	t := &table{header: []string{"Measurement", "#", "UPF / Date", "Goodput<br>Mbit/s", "<br>" + ratio, "Retransmits /<br>loss %"}}
	goodput := func(s *Step) map[string]Iperf {
		out := map[string]Iperf{}
		if s != nil {
			for _, x := range s.Iperf {
				out[iperfKey(x)] = x
			}
		}
		return out
	}
	first := goodput(rows[0].step)
	for _, x := range rows[0].step.Iperf {
		key := iperfKey(x)
		for _, r := range rows {
			mine, ok := goodput(r.step)[key]
			if !ok {
				t.add(key, r.label, upfDate(r.run), "–", "", "")
				continue
			}
			t.add(key, r.label, upfDate(r.run), f1(mine.Mbps), ratioText(over(mine.Mbps, first[key].Mbps, true)), iperfLossText(mine))
		}
	}
	t.write(b)
}
