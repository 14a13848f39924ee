package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sluice-upf/sluice/internal/api"
)

// table is aligned columns, as kubectl prints them.
type table struct{ w *tabwriter.Writer }

// table starts one with a header.
func (c *cli) table(header ...string) *table {
	t := &table{tabwriter.NewWriter(c.out, 0, 8, 3, ' ', 0)}
	t.row(header...)
	return t
}

// fields starts a list of "key: value" lines, the values aligned.
func (c *cli) fields() *table { return &table{tabwriter.NewWriter(c.out, 0, 8, 1, ' ', 0)} }

func (t *table) row(cells ...string) {
	for i, s := range cells {
		if s == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() { t.w.Flush() }

// section writes a blank line and a title between tables.
func (c *cli) section(title string) { fmt.Fprintf(c.out, "\n%s\n", title) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func list(xs []string) string { return strings.Join(xs, ",") }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// age is a duration as kubectl shows ages: two units at most.
func age(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 10*time.Minute:
		return fmt.Sprintf("%dm%ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 3*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

func hex(v uint32) string { return fmt.Sprintf("%#x", v) }

func fteidString(f api.FTEID) string {
	var at []string
	for _, a := range []string{f.IPv4, f.IPv6} {
		if a != "" {
			at = append(at, a)
		}
	}
	return hex(f.TEID) + "@" + strings.Join(at, "/")
}

func tunnelString(t api.Tunnel) string {
	s := hex(t.TEID) + "@" + t.Peer
	if t.Port != 2152 {
		s += fmt.Sprintf(":%d", t.Port)
	}
	return s
}

func ids(v []uint32) string {
	var s []string
	for _, id := range v {
		s = append(s, fmt.Sprint(id))
	}
	return list(s)
}

// bitRate is bit/s in the largest unit that keeps it whole-ish.
func bitRate(v uint64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 1e9 && v%1e7 == 0:
		return fmt.Sprintf("%gG", float64(v)/1e9)
	case v >= 1e6 && v%1e4 == 0:
		return fmt.Sprintf("%gM", float64(v)/1e6)
	case v >= 1e3 && v%10 == 0:
		return fmt.Sprintf("%gk", float64(v)/1e3)
	}
	return fmt.Sprint(v)
}

func pair(a, b string) string { return a + "/" + b }

func (c *cli) describeSession(s api.Session) {
	f := c.fields()
	f.row("SEID:", s.SEID)
	f.row("CP F-SEID:", s.CPSEID+" at "+s.CPAddress)
	f.row("peer:", s.Peer)
	f.flush()

	c.section("PDRs")
	t := c.table("ID", "PRECEDENCE", "SOURCE", "F-TEID", "UE", "SDF FILTERS", "QFI", "OUTER HEADER REMOVAL", "FAR", "QER", "URR")
	for _, p := range s.PDRs {
		var fteid, ue, qfi string
		if p.FTEID != nil {
			fteid = fteidString(*p.FTEID)
		}
		if u := p.UEIP; u != nil {
			ue = list(slices.DeleteFunc([]string{u.IPv4, u.IPv6Prefix}, func(s string) bool { return s == "" }))
			ue += map[string]string{"source": " (src)", "destination": " (dst)"}[u.Direction]
		}
		var sdfs []string
		for _, f := range p.SDFFilters {
			sdfs = append(sdfs, f.FlowDescription)
		}
		if p.QFI != 0 {
			qfi = fmt.Sprint(p.QFI)
		}
		t.row(fmt.Sprint(p.ID), fmt.Sprint(p.Precedence), p.SourceInterface, fteid, ue, strings.Join(sdfs, "; "), qfi,
			p.OuterHeaderRemoval, fmt.Sprint(p.FARID), ids(p.QERIDs), ids(p.URRIDs))
	}
	t.flush()

	c.section("FARs")
	t = c.table("ID", "APPLY ACTION", "DESTINATION", "NETWORK INSTANCE", "TUNNEL", "BAR")
	for _, f := range s.FARs {
		var dest, ni, tunnel, bar string
		if fw := f.Forwarding; fw != nil {
			dest, ni = fw.DestinationInterface, fw.NetworkInstance
			if fw.OuterHeaderCreation != nil {
				tunnel = tunnelString(*fw.OuterHeaderCreation)
			}
		}
		if f.BARID != nil {
			bar = fmt.Sprint(*f.BARID)
		}
		t.row(fmt.Sprint(f.ID), list(f.ApplyAction), dest, ni, tunnel, bar)
	}
	t.flush()

	if len(s.QERs) > 0 {
		c.section("QERs")
		t = c.table("ID", "GATE UL/DL", "MBR UL/DL", "GBR UL/DL", "QFI")
		for _, q := range s.QERs {
			qfi := ""
			if q.QFI != 0 {
				qfi = fmt.Sprint(q.QFI)
			}
			t.row(fmt.Sprint(q.ID), pair(q.Gate.Uplink, q.Gate.Downlink), pair(bitRate(q.MBR.Uplink), bitRate(q.MBR.Downlink)),
				pair(bitRate(q.GBR.Uplink), bitRate(q.GBR.Downlink)), qfi)
		}
		t.flush()
	}

	if len(s.URRs) > 0 {
		c.section("URRs (counted since each URR was created)")
		t = c.table("ID", "METHOD", "TRIGGERS", "UL PACKETS", "UL BYTES", "DL PACKETS", "DL BYTES")
		for _, u := range s.URRs {
			t.row(fmt.Sprint(u.ID), list(u.MeasurementMethod), list(u.ReportingTriggers),
				fmt.Sprint(u.Usage.Uplink.Packets), fmt.Sprint(u.Usage.Uplink.Bytes),
				fmt.Sprint(u.Usage.Downlink.Packets), fmt.Sprint(u.Usage.Downlink.Bytes))
		}
		t.flush()
	}

	if len(s.BARs) > 0 {
		c.section("BARs")
		t = c.table("ID", "SUGGESTED BUFFERING PACKETS")
		for _, b := range s.BARs {
			t.row(fmt.Sprint(b.ID), fmt.Sprint(b.SuggestedPackets))
		}
		t.flush()
	}
}

func (c *cli) describeStats(s api.Stats) {
	v := s.Verdicts
	t := c.table("VERDICT", "PACKETS")
	for _, r := range []struct {
		name string
		n    uint64
	}{{"redirected", v.Redirected}, {"transmitted", v.Transmitted}, {"passed", v.Passed}, {"dropped", v.Dropped}, {"aborted", v.Aborted}} {
		t.row(r.name, fmt.Sprint(r.n))
	}
	t.flush()

	c.section("Drops")
	if len(s.Drops) == 0 {
		fmt.Fprintln(c.out, "none")
	} else {
		t = c.table("REASON", "PACKETS")
		for _, r := range slices.Sorted(maps.Keys(s.Drops)) {
			t.row(r, fmt.Sprint(s.Drops[r]))
		}
		t.flush()
	}

	c.section("Interfaces")
	t = c.table("INTERFACE", "RX PACKETS", "RX BYTES", "TX PACKETS", "TX BYTES")
	for _, name := range slices.Sorted(maps.Keys(s.Interfaces)) {
		i := s.Interfaces[name]
		t.row(name, fmt.Sprint(i.Rx.Packets), fmt.Sprint(i.Rx.Bytes), fmt.Sprint(i.Tx.Packets), fmt.Sprint(i.Tx.Bytes))
	}
	t.flush()
}
