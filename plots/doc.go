// Package plots draws lockbench results with gonum/plot, as PNG or SVG:
// the latency percentile spectrum (HdrHistogram style, x on a log scale of
// 1/(1−q)), throughput over time with fault windows shaded, per-owner
// fairness, a chaos run's holder timeline (one row per owner, each hold a
// bar coloured by what its holder knew, overlaps of incompatible holders
// banded and marked in red, faults shaded), and a sweep's capacity curves
// (throughput and p99 acquire latency against concurrency or offered rate,
// with the knee, the best point under the SLO, the points breaking it, the
// SLO line and the current setting). It reads only results' types; log
// axes are guarded against the zero values that make gonum/plot panic.
package plots
