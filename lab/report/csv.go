package report

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
)

// csvColumns are the CSV's columns, in order. A row fills those that apply
// to its kind of measurement and leaves the rest empty.
var csvColumns = []string{
	"step", "kind", "through", "direction", "size", "subscribers", "trial", "passed", "final",
	"offered_kpps", "seconds", "core_seconds", "rounds", "tx_packets", "rx_packets", "tx_gbps", "tx_kpps", "rx_gbps", "rx_kpps",
	"loss_pct", "latency_p50_us", "latency_p99_us", "latency_max_us", "cpu_pct", "ratio_to_reference", "ratio_p25", "ratio_p75",
	"rtt_min_ms", "rtt_avg_ms", "rtt_max_ms", "rtt_mdev_ms", "goodput_pps", "goodput_mbps",
	"target_per_second", "sessions_per_second", "failed", "setup_p50_ms", "setup_p99_ms",
	"lost_packets", "duplicates", "reordered", "sent_while_away", "signal", "stop_ms", "restart_ms", "recovery_unchanged",
	"protocol", "ues", "streams", "mbr_mbps", "retransmits", "ratio_to_ceiling", "of_mbr",
	"fetches", "fetch_p50_ms", "fetch_p99_ms",
	"check", "figure", "unit", "min", "max", "verdict", "note", "error",
}

// row is one CSV row by column name.
type row map[string]string

// WriteCSV writes one row per measurement: a direction of a throughput
// step, an NDR trial and the NDR itself (trial empty), a ping or cbr size,
// a direction at a subscriber count, a churn step, a direction across a
// restart. "through" says whether the UPF under test or the reference
// forwarder carried the traffic.
func WriteCSV(w io.Writer, run *Run) error {
	out := csv.NewWriter(w)
	if err := out.Write(csvColumns); err != nil {
		return err
	}
	for _, s := range run.Steps {
		for _, r := range stepRows(s) {
			r["step"], r["kind"] = s.Name, s.Kind
			line := make([]string, len(csvColumns))
			for i, c := range csvColumns {
				line[i] = r[c]
			}
			if err := out.Write(line); err != nil {
				return err
			}
		}
	}
	out.Flush()
	return out.Error()
}

func stepRows(s Step) []row {
	var rows []row
	if s.Error != "" {
		rows = append(rows, row{"error": s.Error})
	}
	for _, k := range kinds {
		rows = append(rows, k.rows(s)...)
	}
	return rows
}

// measurementRows is m's row, marked with extra, and its reference's.
func measurementRows(m Measurement, extra row) []row {
	rows := []row{measurementRow(m, "upf", extra)}
	if m.Reference != nil {
		rows = append(rows, measurementRow(*m.Reference, "reference", extra))
	}
	return rows
}

func measurementRow(m Measurement, through string, extra row) row {
	r := row{
		"through": through, "direction": m.Direction, "size": m.Size,
		"offered_kpps": num(m.OfferedKpps), "seconds": num(m.Seconds),
		"tx_packets": count(m.TxPackets), "rx_packets": count(m.RxPackets),
		"tx_gbps": num(m.TxGbps), "tx_kpps": num(m.TxKpps), "rx_gbps": num(m.RxGbps), "rx_kpps": num(m.RxKpps),
		"loss_pct": num(m.LossPct),
	}
	if l := m.Latency; l != nil {
		r["latency_p50_us"], r["latency_p99_us"], r["latency_max_us"] = num(l.P50), num(l.P99), num(l.Max)
	}
	if m.CPU != nil {
		r["cpu_pct"] = num(m.CPU.TotalPct)
	}
	if m.CoreSeconds > 0 {
		r["core_seconds"] = num(m.CoreSeconds)
	}
	if len(m.Rounds) > 0 {
		r["rounds"] = strconv.Itoa(len(m.Rounds))
	}
	ratioColumns(r, m.RatioToReference, m.RatioSpread)
	for k, v := range extra {
		r[k] = v
	}
	return r
}

// ratioColumns fills a row's ratio to reference and its spread.
func ratioColumns(r row, ratio *float64, spread *Spread) {
	if ratio != nil {
		r["ratio_to_reference"] = num(*ratio)
	}
	if spread != nil {
		r["ratio_p25"], r["ratio_p75"] = num(spread.Low), num(spread.High)
	}
}

// num writes a figure with at most six decimals, so that float noise
// does not reach the file.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

func count(n uint64) string { return strconv.FormatUint(n, 10) }
