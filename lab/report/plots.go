package report

import (
	"fmt"
	"image"
	"image/png"
	"io"
)

// Plot sizes in pixels: one chart, or a chart of several stacked.
const (
	PlotWidth   = 960
	ChartHeight = 540 // a plot of one chart
	PanelHeight = 400 // each chart of a plot of several
)

// Plot is one PNG: a chart, or charts stacked that share an x axis.
type Plot struct {
	File   string // e.g. "04-ping-rtt.png": the step's number, its kind, what is drawn
	Title  string
	charts []chart
}

// Size is the plot's width and height in pixels.
func (p Plot) Size() (width, height int) {
	if len(p.charts) == 1 {
		return PlotWidth, ChartHeight
	}
	return PlotWidth, PanelHeight * len(p.charts)
}

// WritePNG draws the plot as a PNG.
func (p Plot) WritePNG(w io.Writer) error {
	width, height := p.Size()
	cv := newCanvas(width, height)
	panel := height / len(p.charts)
	for i, c := range p.charts {
		cv.draw(c, image.Rect(0, i*panel, width, (i+1)*panel))
	}
	return png.Encode(w, cv.img)
}

// Plots are the run's plots: RTT by size for each ping step (as oping's
// figures), goodput in packets and in Mbit/s by size for each cbr step (as
// ocbr's), and throughput and loss by subscriber count for each
// subscribers step (as seed 003's figures).
func Plots(run *Run) []Plot {
	var plots []Plot
	for i, s := range run.Steps {
		file := func(what string) string { return fmt.Sprintf("%02d-%s-%s.png", i+1, s.Kind, what) }
		if len(s.Ping) > 0 {
			plots = append(plots, rttPlot(file("rtt"), s))
		}
		if len(s.CBR) > 0 {
			plots = append(plots, cbrPlots(file, s)...)
		}
		if len(s.Subscribers) > 0 {
			plots = append(plots, subscribersPlot(file("load"), s))
		}
	}
	return plots
}

func rttPlot(file string, s Step) Plot {
	var lo, avg, hi []point
	for _, p := range s.Ping {
		if p.Received == 0 {
			continue // no answer, no time
		}
		x := float64(p.Size)
		lo, avg, hi = append(lo, point{x, p.MinMs}), append(avg, point{x, p.AvgMs}), append(hi, point{x, p.MaxMs})
	}
	title := "Round-trip time by size: " + s.Name
	return Plot{File: file, Title: title, charts: []chart{{
		title: title, xLabel: "ICMP payload (bytes)", yLabel: "RTT (ms)",
		series: []series{{name: "avg", points: avg}, {name: "min", points: lo, color: 1}, {name: "max", points: hi, color: 2}},
	}}}
}

func cbrPlots(file func(string) string, s Step) []Plot {
	var pps, mbps []point
	for _, c := range s.CBR {
		pps, mbps = append(pps, point{float64(c.Size), c.PPS}), append(mbps, point{float64(c.Size), c.Mbps})
	}
	one := func(name, title, yLabel string, points []point) Plot {
		return Plot{File: file(name), Title: title, charts: []chart{{
			title: title, xLabel: "UDP payload (bytes)", yLabel: yLabel, series: []series{{name: "goodput", points: points}},
		}}}
	}
	return []Plot{
		one("pps", "Goodput in packets by size: "+s.Name, "packets/s", pps),
		one("mbps", "Goodput in Mbit/s by size: "+s.Name, "Mbit/s", mbps),
	}
}

// subscribersPlot stacks throughput over loss, against the subscriber
// count, with the reference forwarder's throughput where it was measured.
func subscribersPlot(file string, s Step) Plot {
	var up, down, refUp, refDown, upLoss, downLoss []point
	for _, l := range s.Subscribers {
		x := float64(l.Subscribers)
		up, down = append(up, point{x, l.Uplink.RxGbps}), append(down, point{x, l.Downlink.RxGbps})
		upLoss, downLoss = append(upLoss, point{x, l.Uplink.LossPct}), append(downLoss, point{x, l.Downlink.LossPct})
		if r := l.Uplink.Reference; r != nil {
			refUp = append(refUp, point{x, r.RxGbps})
		}
		if r := l.Downlink.Reference; r != nil {
			refDown = append(refDown, point{x, r.RxGbps})
		}
	}
	speeds := []series{{name: "upload", points: up}, {name: "download", points: down, color: 1}}
	if len(refUp)+len(refDown) > 0 {
		speeds = append(speeds, series{name: "upload, reference forwarder", points: refUp, dashed: true},
			series{name: "download, reference forwarder", points: refDown, color: 1, dashed: true})
	}
	title := "Throughput and packet loss by subscribers: " + s.Name
	return Plot{File: file, Title: title, charts: []chart{
		{title: "Throughput: " + s.Name, xLabel: "subscribers", yLabel: "Gbps", series: speeds},
		{title: "Packet loss: " + s.Name, xLabel: "subscribers", yLabel: "loss (%)",
			series: []series{{name: "upload", points: upLoss}, {name: "download", points: downLoss, color: 1}}},
	}}
}
