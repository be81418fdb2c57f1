// Package plots draws lockbench results with gonum/plot, as PNG or SVG:
// the latency percentile spectrum (HdrHistogram style, x on a log scale of
// 1/(1−q)), throughput over time with fault windows shaded, and per-owner
// fairness. It reads only results' types; log axes are guarded against the
// zero values that make gonum/plot panic.
//
// Holder timelines, capacity curves and the reports that embed these
// charts come with the rest of issue 6.
package plots
