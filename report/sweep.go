package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/lockbench/lockbench/results"
)

// sweepBlocks are a sweep's section: the capacity statement, the curves
// and the points.
func sweepBlocks(s *Sweep, ch *charts) []block {
	sw := s.Sweep
	h := heading{level: 2, text: "Capacity: " + sw.Meta.Profile + " · " + sw.Meta.ImplName()}
	if sw.Partial {
		h.badge = &cell{text: "PARTIAL", class: "warn"}
	}
	bl := []block{h}
	slo := "no SLO"
	if sw.SLOP99Us > 0 {
		slo = "SLO: acquire p99 ≤ " + us(sw.SLOP99Us)
	}
	stop := fmt.Sprintf("a curve stops after %s in a row broke the SLO", results.Count(sw.StopAfter, "point"))
	if sw.StopAfter == 0 {
		stop = "every planned point runs"
	}
	bl = append(bl, para{text: fmt.Sprintf("%d of %d planned points over %s (axis: %s); %s; %s. Server: %s (%s) on %s. Sweep file: %s.",
		len(sw.Points), sw.Planned, secs(sw.Seconds), sw.Axis, slo, stop, sw.Meta.ServerName(), sw.Meta.RedisBackend, sw.Meta.Host, s.Path)})
	if sw.Meta.Workload != "" {
		bl = append(bl, para{text: "Base workload, which the axis varies: " + sw.Meta.Workload + "."})
	}
	if sw.Partial {
		bl = append(bl, para{class: "warn", text: "Partial sweep: " + sw.PartialReason + "."})
	}
	for _, cp := range sw.Capacity {
		if cp.Series != "" {
			bl = append(bl, heading{level: 4, text: cp.Series})
		}
		class := "ok"
		if cp.Best == nil {
			class = "bad"
		}
		for i, line := range capacityStatement(cp, sw.Axis, sw.SLOP99Us) {
			if i == 0 {
				bl = append(bl, para{text: line, class: class})
			} else {
				bl = append(bl, para{text: line})
			}
		}
	}
	bl = append(bl, modelTable(sw)...)
	bl = append(bl, ch.capacity(s)...)
	t := table{right: true, head: []string{"series", "x", "clients×owners", "rate", "ops/s", "p50", "p99", "failed", "violations", "SLO", "result"}}
	named := slices.ContainsFunc(sw.Points, func(p results.SweepPoint) bool { return p.Series != "" })
	if !named {
		t.head = t.head[1:]
	}
	for _, p := range sw.Points {
		ok := styled("meets", "ok")
		switch {
		case p.Failure != "":
			ok = styled("FAILED: "+p.Failure, "bad")
		case !p.MeetsSLO:
			ok = styled("broken", "bad")
		}
		rate := "closed"
		if p.Rate > 0 {
			rate = results.CommasFloat(p.Rate)
		}
		row := []cell{plain(p.Series), plain(fmt.Sprintf("%g", p.X)), plain(fmt.Sprintf("%d×%d", p.Clients, p.Owners)), plain(rate),
			plain(results.CommasFloat(p.OpsPerSec)), plain(p.Percentile(p.P50Us)), plain(p.Percentile(p.P99Us)), plain(results.Commas(p.Errors)), plain(results.Commas(p.Violations)), ok, plain(p.File)}
		if !named {
			row = row[1:]
		}
		t.rows = append(t.rows, row)
	}
	bl = append(bl, heading{level: 4, text: "Points"}, t)
	return bl
}

// modelTable is the fitted scalability law of every curve that has one,
// each parameter with its 95% interval.
func modelTable(sw *results.Sweep) []block {
	t := table{right: true, head: []string{"series", "points", "λ ops/s", "σ contention", "κ coherency", "R² · RMS", "N*", "X(N*) ops/s", "under the SLO up to", "model"}}
	g3 := func(v float64) string { return fmt.Sprintf("%.3g", v) }
	iv := func(v float64, i results.Interval, f func(float64) string) string {
		return f(v) + " [" + i.Format(f) + "]"
	}
	whole := func(v float64) string { return results.Commas(int64(math.Round(v))) }
	for _, cp := range sw.Capacity {
		m := cp.Model
		if m == nil {
			continue
		}
		if m.Lambda == 0 {
			t.rows = append(t.rows, []cell{plain(cp.Series), plain(fmt.Sprint(m.Points)), plain("-"), plain("-"), plain("-"), plain("-"), plain("-"), plain("-"), plain("-"), styled("none: "+m.Refused, "warn")})
			continue
		}
		peak, peakX := "none", "-"
		switch {
		case m.PeakN > 0:
			peak, peakX = iv(m.PeakN, m.PeakNCI, whole), iv(m.PeakX, m.PeakXCI, whole)
		case m.Ceiling > 0:
			peakX = "levels off at " + whole(m.Ceiling)
		}
		slo := "-"
		if m.SLON > 0 {
			slo = fmt.Sprintf("%s %s", whole(m.SLON), m.Unit)
		}
		verdict := styled("predicts", "ok")
		if !m.OK() {
			verdict = styled("refused: "+m.Refused, "warn")
		}
		t.rows = append(t.rows, []cell{plain(cp.Series), plain(fmt.Sprint(m.Points)), plain(iv(m.Lambda, m.LambdaCI, whole)), plain(iv(m.Sigma, m.SigmaCI, g3)),
			plain(iv(m.Kappa, m.KappaCI, g3)), plain(fmt.Sprintf("%.3f · %.1f%%", m.R2, m.RMSPct)), plain(peak), plain(peakX), plain(slo), verdict})
	}
	if len(t.rows) == 0 {
		return nil
	}
	return []block{heading{level: 4, text: "Scalability model (Universal Scalability Law, 95% intervals)"}, t}
}
