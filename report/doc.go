// Package report turns lockbench's files into a document people read: a
// self-contained HTML page (charts embedded as PNG data, inline CSS, no
// scripts or external fonts) or Markdown with its charts as PNG files
// beside it.
//
// [Load] reads result files (with their HdrHistogram logs), chaos reports
// (with the results of their runs), sweeps and side-by-side matrices,
// given as files or directories; [Scan] lists what a directory holds for
// commands that pick files themselves.
// [Write] renders them: run metadata, a summary table, latency spectra,
// throughput over time with fault windows, fairness, holder timelines,
// the safety verdict, verdict tables for chaos suites, capacity curves for
// sweeps, the implementations' tables for a matrix (docs/perf.md), and a
// comparison table when several runs are given.
//
// Content is built once as a list of blocks (headings, paragraphs,
// tables, charts) and rendered by each format, so HTML and Markdown never
// disagree. It imports results and plots only (and internal/infile, as
// every reader of input files does).
package report
