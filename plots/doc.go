// Package plots will draw gonum/plot charts from package results: latency
// percentile spectra, throughput over time with fault windows, fairness,
// holder timelines and capacity curves.
//
// Filled by issue 6; empty until then.
package plots
