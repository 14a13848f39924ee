package report

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// chart is a line chart: series of points over two linear axes.
type chart struct {
	title, xLabel, yLabel string
	series                []series
}

type series struct {
	name   string
	points []point
	color  int  // in palette: a measurement and its reference share one
	dashed bool // the reference forwarder's, beside the UPF's solid line
}

type point struct{ x, y float64 }

// Room around the plot area, in pixels, for the title, ticks and labels.
const (
	marginLeft   = 88
	marginRight  = 28
	marginTop    = 48
	marginBottom = 64
	// captionHeight is the room a caption takes under a title.
	captionHeight = 20
)

var (
	white     = color.RGBA{255, 255, 255, 255}
	ink       = color.RGBA{40, 40, 40, 255}
	gridColor = color.RGBA{225, 225, 225, 255}
	// palette tells series apart, also for most colour-blind readers
	// (Tableau 10).
	palette = []color.RGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255},
		{214, 39, 40, 255}, {148, 103, 189, 255}, {140, 86, 75, 255},
	}
)

// goRegular is the Go font, parsed once.
var goRegular = sync.OnceValue(func() *opentype.Font {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		panic("report: the Go font does not parse: " + err.Error())
	}
	return f
})

// faceOf is the Go font at size points (at 72 dpi, pixels). A face is not
// safe for concurrent use, so each drawing makes its own.
func faceOf(size float64) font.Face {
	face, err := opentype.NewFace(goRegular(), &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		panic("report: " + err.Error())
	}
	return face
}

// canvas is an image being drawn, with its faces.
type canvas struct {
	img         *image.RGBA
	text, title font.Face
}

func newCanvas(width, height int) *canvas {
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(white), image.Point{}, draw.Src)
	return &canvas{img: img, text: faceOf(14), title: faceOf(18)}
}

// draw draws c into area of the canvas, with caption, if any, under its
// title.
func (cv *canvas) draw(c chart, area image.Rectangle, caption string) {
	top := marginTop
	if caption != "" {
		top += captionHeight
	}
	plot := image.Rect(area.Min.X+marginLeft, area.Min.Y+top, area.Max.X-marginRight, area.Max.Y-marginBottom)
	xs, ys := c.extent()
	xTicks, yTicks := niceTicks(xs.lo, xs.hi), niceTicks(ys.lo, ys.hi)
	sx := scale{xTicks[0], xTicks[len(xTicks)-1], float64(plot.Min.X), float64(plot.Max.X)}
	sy := scale{yTicks[0], yTicks[len(yTicks)-1], float64(plot.Max.Y), float64(plot.Min.Y)}

	cv.grid(plot, xTicks, yTicks, sx, sy)
	cv.label(c.title, cv.title, (area.Min.X+area.Max.X)/2, area.Min.Y+30, alignCenter)
	if caption != "" {
		cv.label(caption, cv.text, (area.Min.X+area.Max.X)/2, area.Min.Y+30+captionHeight, alignCenter)
	}
	cv.label(c.xLabel, cv.text, (plot.Min.X+plot.Max.X)/2, plot.Max.Y+50, alignCenter)
	cv.verticalLabel(c.yLabel, area.Min.X+18, (plot.Min.Y+plot.Max.Y)/2)
	var drawn []point // in pixels, for the legend to avoid
	for _, s := range c.series {
		drawn = append(drawn, cv.line(s, sx, sy)...)
	}
	cv.legend(c.series, plot, drawn)
}

// span is the range of values on one axis.
type span struct{ lo, hi float64 }

// extent is the span of the x and y values. The y axis starts at 0 for
// values that are never negative, so that heights compare.
func (c chart) extent() (xs, ys span) {
	xs, ys = span{math.Inf(1), math.Inf(-1)}, span{0, math.Inf(-1)}
	for _, s := range c.series {
		for _, p := range s.points {
			xs.lo, xs.hi = min(xs.lo, p.x), max(xs.hi, p.x)
			ys.lo, ys.hi = min(ys.lo, p.y), max(ys.hi, p.y)
		}
	}
	if math.IsInf(xs.lo, 0) {
		xs, ys = span{0, 1}, span{0, 1}
	}
	return widen(xs), widen(ys)
}

// widen gives a span of one value some room.
func widen(s span) span {
	if s.hi > s.lo {
		return s
	}
	if s.lo == 0 {
		return span{0, 1}
	}
	pad := math.Abs(s.lo) / 2
	return span{s.lo - pad, s.hi + pad}
}

// niceTicks are about six round values (1, 2 or 5 times a power of ten
// apart) from at or below lo to at or above hi.
func niceTicks(lo, hi float64) []float64 {
	step := niceStep((hi - lo) / 6)
	first, last := math.Floor(lo/step), math.Ceil(hi/step)
	ticks := make([]float64, 0, int(last-first)+1)
	for i := first; i <= last; i++ {
		ticks = append(ticks, i*step)
	}
	return ticks
}

func niceStep(rough float64) float64 {
	power := math.Pow(10, math.Floor(math.Log10(rough)))
	for _, m := range []float64{1, 2, 5} {
		if m*power >= rough {
			return m * power
		}
	}
	return 10 * power
}

// scale maps values from [lo, hi] to pixels from [from, to].
type scale struct{ lo, hi, from, to float64 }

func (s scale) at(v float64) float64 {
	return s.from + (v-s.lo)/(s.hi-s.lo)*(s.to-s.from)
}

// grid draws the grid lines, the frame and the tick labels.
func (cv *canvas) grid(plot image.Rectangle, xTicks, yTicks []float64, sx, sy scale) {
	xStep, yStep := xTicks[1]-xTicks[0], yTicks[1]-yTicks[0]
	for _, t := range xTicks {
		x := int(math.Round(sx.at(t)))
		cv.fill(image.Rect(x, plot.Min.Y, x+1, plot.Max.Y), gridColor)
		cv.label(tickText(t, xStep, xTicks[len(xTicks)-1]), cv.text, x, plot.Max.Y+22, alignCenter)
	}
	for _, t := range yTicks {
		y := int(math.Round(sy.at(t)))
		cv.fill(image.Rect(plot.Min.X, y, plot.Max.X, y+1), gridColor)
		cv.label(tickText(t, yStep, yTicks[len(yTicks)-1]), cv.text, plot.Min.X-8, y+5, alignRight)
	}
	cv.fill(image.Rect(plot.Min.X, plot.Min.Y, plot.Min.X+1, plot.Max.Y+1), ink)
	cv.fill(image.Rect(plot.Min.X, plot.Max.Y, plot.Max.X+1, plot.Max.Y+1), ink)
}

// tickText writes a tick with the decimals its step needs, in M from a
// million and in k from ten thousand, so that byte sizes stay as they are.
func tickText(v, step, top float64) string {
	if v == 0 {
		return "0"
	}
	suffix := ""
	for _, u := range []struct {
		from, scale float64
		suffix      string
	}{{1e6, 1e6, "M"}, {1e4, 1e3, "k"}} {
		if math.Abs(top) >= u.from {
			v, step, suffix = v/u.scale, step/u.scale, u.suffix
			break
		}
	}
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	return strconv.FormatFloat(v, 'f', decimals, 64) + suffix
}

func (cv *canvas) fill(r image.Rectangle, c color.Color) {
	draw.Draw(cv.img, r, image.NewUniform(c), image.Point{}, draw.Over)
}

type alignment int

const (
	alignLeft alignment = iota
	alignCenter
	alignRight
)

// label writes text with its baseline at y, placed about x by align.
func (cv *canvas) label(text string, face font.Face, x, y int, align alignment) {
	width := font.MeasureString(face, text).Round()
	switch align {
	case alignCenter:
		x -= width / 2
	case alignRight:
		x -= width
	}
	d := font.Drawer{Dst: cv.img, Src: image.NewUniform(ink), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(text)
}

// verticalLabel writes text upwards, centred on (x, y): the y axis's label.
func (cv *canvas) verticalLabel(text string, x, y int) {
	metrics := cv.text.Metrics()
	width := font.MeasureString(cv.text, text).Round()
	height := (metrics.Ascent + metrics.Descent).Ceil()
	flat := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(flat, flat.Bounds(), image.NewUniform(white), image.Point{}, draw.Src)
	d := font.Drawer{Dst: flat, Src: image.NewUniform(ink), Face: cv.text, Dot: fixed.P(0, metrics.Ascent.Ceil())}
	d.DrawString(text)
	// Turned a quarter left: the flat image's column i becomes row
	// width-1-i, its row j column j.
	left, top := x-height/2, y-width/2
	for i := 0; i < width; i++ {
		for j := 0; j < height; j++ {
			cv.img.Set(left+j, top+width-1-i, flat.At(i, j))
		}
	}
}

// line draws a series: a 2.5-pixel polyline, solid or dashed, with a dot
// at every point, anti-aliased. It returns where it drew, in pixels.
func (cv *canvas) line(s series, sx, sy scale) []point {
	b := cv.img.Bounds()
	r := vector.NewRasterizer(b.Dx(), b.Dy())
	px := make([]point, len(s.points))
	for i, p := range s.points {
		px[i] = point{sx.at(p.x), sy.at(p.y)}
	}
	pieces := [][2]point{}
	for i := 1; i < len(px); i++ {
		pieces = append(pieces, [2]point{px[i-1], px[i]})
	}
	if s.dashed {
		pieces = dashes(px)
	}
	for _, p := range pieces {
		addPolygon(r, segment(p[0], p[1], 1.25))
	}
	for _, p := range px {
		addPolygon(r, disc(p, 4))
	}
	r.Draw(cv.img, b, image.NewUniform(palette[s.color%len(palette)]), image.Point{})
	return along(px)
}

// along is the polyline px with a point every few pixels between its
// corners: what the line covers.
func along(px []point) []point {
	out := append([]point(nil), px...)
	for i := 1; i < len(px); i++ {
		a, b := px[i-1], px[i]
		steps := int(math.Hypot(b.x-a.x, b.y-a.y) / 4)
		for k := 1; k < steps; k++ {
			f := float64(k) / float64(steps)
			out = append(out, point{a.x + (b.x-a.x)*f, a.y + (b.y-a.y)*f})
		}
	}
	return out
}

// dashes cuts a polyline into dashes of 10 pixels, 6 apart, running on
// across its corners.
func dashes(px []point) [][2]point {
	const on, period = 10.0, 16.0
	var out [][2]point
	walked := 0.0 // along the whole line, at the start of each segment
	for i := 1; i < len(px); i++ {
		a, b := px[i-1], px[i]
		length := math.Hypot(b.x-a.x, b.y-a.y)
		at := func(d float64) point { return point{a.x + (b.x-a.x)*d/length, a.y + (b.y-a.y)*d/length} }
		for d := -math.Mod(walked, period); d < length; d += period {
			from, to := max(d, 0), min(d+on, length)
			if to > from {
				out = append(out, [2]point{at(from), at(to)})
			}
		}
		walked += length
	}
	return out
}

// segment is the rectangle of a line of half-width w from a to b.
func segment(a, b point, w float64) []point {
	dx, dy := b.x-a.x, b.y-a.y
	length := math.Hypot(dx, dy)
	if length == 0 {
		return nil
	}
	nx, ny := -dy/length*w, dx/length*w
	return []point{{a.x + nx, a.y + ny}, {b.x + nx, b.y + ny}, {b.x - nx, b.y - ny}, {a.x - nx, a.y - ny}}
}

// disc is a polygon close to a circle of radius r about c.
func disc(c point, r float64) []point {
	const sides = 20
	pts := make([]point, sides)
	for i := range pts {
		a := 2 * math.Pi * float64(i) / sides
		pts[i] = point{c.x + r*math.Cos(a), c.y + r*math.Sin(a)}
	}
	return pts
}

// addPolygon adds pts to r, always turning the same way: the rasterizer
// adds up coverage with its sign, so overlapping shapes of opposite turns
// would cancel out.
func addPolygon(r *vector.Rasterizer, pts []point) {
	if len(pts) < 3 {
		return
	}
	var area float64
	for i, p := range pts {
		q := pts[(i+1)%len(pts)]
		area += p.x*q.y - q.x*p.y
	}
	if area < 0 {
		for i, j := 0, len(pts)-1; i < j; i, j = i+1, j-1 {
			pts[i], pts[j] = pts[j], pts[i]
		}
	}
	r.MoveTo(float32(pts[0].x), float32(pts[0].y))
	for _, p := range pts[1:] {
		r.LineTo(float32(p.x), float32(p.y))
	}
	r.ClosePath()
}

// legend names the series in a box in the corner of the plot that hides
// the fewest of the drawn points.
func (cv *canvas) legend(list []series, plot image.Rectangle, drawn []point) {
	if len(list) == 0 {
		return
	}
	const row, swatch, pad, inset = 20, 28, 8, 12
	width := 0
	for _, s := range list {
		width = max(width, font.MeasureString(cv.text, s.name).Round())
	}
	size := image.Pt(pad*3+swatch+width, pad+row*len(list))
	box := legendCorner(plot, size, inset, drawn)
	cv.fill(box.Inset(-1), gridColor)
	cv.fill(box, white)
	key := scale{0, 1, 0, 1}
	for i, s := range list {
		y := float64(box.Min.Y + pad/2 + row*i + row/2)
		sample := series{points: []point{{float64(box.Min.X + pad), y}, {float64(box.Min.X + pad + swatch), y}},
			color: s.color, dashed: s.dashed}
		cv.line(sample, key, key)
		cv.label(strings.TrimSpace(s.name), cv.text, box.Min.X+pad*2+swatch, int(y)+5, alignLeft)
	}
}

// legendCorner places a box of size in the corner of plot, inset, that
// covers the fewest of drawn; top left when they tie.
func legendCorner(plot image.Rectangle, size image.Point, inset int, drawn []point) image.Rectangle {
	corners := []image.Point{
		{plot.Min.X + inset, plot.Min.Y + inset},
		{plot.Max.X - inset - size.X, plot.Min.Y + inset},
		{plot.Max.X - inset - size.X, plot.Max.Y - inset - size.Y},
		{plot.Min.X + inset, plot.Max.Y - inset - size.Y},
	}
	var best image.Rectangle
	fewest := -1
	for _, c := range corners {
		box := image.Rectangle{Min: c, Max: c.Add(size)}
		covered := 0
		for _, p := range drawn {
			if image.Pt(int(p.x), int(p.y)).In(box.Inset(-6)) {
				covered++
			}
		}
		if fewest < 0 || covered < fewest {
			best, fewest = box, covered
		}
	}
	return best
}
