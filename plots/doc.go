// Package plots draws lockbench's charts with gonum/plot, as PNG or SVG.
//
// The charts: the latency percentile spectrum (HdrHistogram style, x on a
// log scale of 1/(1−q)), throughput over time with fault windows shaded,
// per-owner fairness, a chaos run's holder timeline (a row per owner, each
// hold coloured by what its holder knew, overlaps marked in red), and a
// sweep's capacity curves (with the knee, the best point under the SLO and
// the current setting). It reads only results' types; log axes are guarded
// against the zero values that make gonum/plot panic.
package plots
