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
		for _, k := range kinds {
			if p, ok := k.kind.(plottedKind); ok && k.has(&s) {
				plots = append(plots, p.plots(s, file)...)
			}
		}
	}
	return plots
}
