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
	File  string // e.g. "04-ping-rtt.png": the step's number, its kind, what is drawn
	Title string
	// Caption says whose figures they are: the UPF, the host, the date;
	// it stands under the first chart's title.
	Caption string
	charts  []chart
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
		caption := ""
		if i == 0 {
			caption = p.Caption
		}
		cv.draw(c, image.Rect(0, i*panel, width, (i+1)*panel), caption)
	}
	return png.Encode(w, cv.img)
}

// Plots are the run's plots: Rx rate and loss by round for each
// throughput step, the trials of each NDR search, RTT by size for each
// ping step (as oping's figures), goodput, what was sent and lost by size
// for each cbr step (as ocbr's), and throughput and loss by subscriber
// count for each subscribers step (as seed 003's figures); the reference
// forwarder's dashed beside the UPF's. Each names the UPF and the host.
func Plots(run *Run) []Plot {
	var plots []Plot
	caption := plotCaption(run)
	for i, s := range run.Steps {
		file := func(what string) string { return fmt.Sprintf("%02d-%s-%s.png", i+1, s.Kind, what) }
		for _, k := range kinds {
			if p, ok := k.kind.(plottedKind); ok && k.has(&s) {
				for _, plot := range p.plots(s, file) {
					plot.Caption = caption
					plots = append(plots, plot)
				}
			}
		}
	}
	return plots
}

// plotCaption is "upfd v0.4.0 on lab1: Linux 6.18.0, CPU × 2, 2026-11-22".
func plotCaption(run *Run) string {
	return fmt.Sprintf("%s on %s, %s", upfText(run.UPF), hostText(run.Host), run.Started.UTC().Format("2006-01-02"))
}
