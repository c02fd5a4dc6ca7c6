package main

import (
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// writeChart draws one panel per metric (throughput, latency) with a line per series
// against connections, side by side, as a PNG.
func writeChart(path string, rep *report) error {
	var metrics []string
	byMetric := map[string][]series{}
	for _, res := range rep.Results {
		for _, s := range res.Series {
			if _, seen := byMetric[s.Metric]; !seen {
				metrics = append(metrics, s.Metric)
			}
			byMetric[s.Metric] = append(byMetric[s.Metric], s)
		}
	}
	row := make([]*plot.Plot, len(metrics))
	for i, metric := range metrics {
		p := plot.New()
		p.Title.Text = metric + " against connections"
		p.X.Label.Text = "connections"
		p.Y.Label.Text = metric
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		p.Legend.Top, p.Legend.Left = true, true
		var lines []any
		for _, s := range byMetric[metric] {
			xys := make(plotter.XYs, len(s.Conns))
			for j := range s.Conns {
				xys[j].X, xys[j].Y = float64(s.Conns[j]), s.Values[j]
			}
			lines = append(lines, s.Name, xys)
		}
		if err := plotutil.AddLinePoints(p, lines...); err != nil {
			return err
		}
		row[i] = p
	}
	width := vg.Length(len(metrics)) * 11 * vg.Centimeter
	img := vgimg.New(width, 10*vg.Centimeter)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(metrics), PadX: vg.Centimeter, PadY: vg.Millimeter * 5, PadLeft: vg.Millimeter * 5, PadRight: vg.Millimeter * 5, PadTop: vg.Millimeter * 5, PadBottom: vg.Millimeter * 5}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, dc)
	for i, p := range row {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
