// Package report turns lockbench's files into a document people read: a
// self-contained HTML page (charts embedded as PNG data, inline CSS, no
// scripts or external fonts) or Markdown with its charts as PNG files
// beside it.
//
// [Load] reads result files (lockbench.result/v1, with their HdrHistogram
// logs), chaos reports (lockbench.chaos/v1, with the results of their
// runs) and sweeps (lockbench.sweep/v1), given as files or directories.
// [Write] renders them: run metadata, a summary table, latency spectra,
// throughput over time with fault windows, fairness, holder timelines,
// the safety verdict, verdict tables for chaos suites, capacity curves for
// sweeps, and a comparison table when several runs are given.
//
// Content is built once as a list of blocks (headings, paragraphs,
// tables, charts) and rendered by each format, so HTML and Markdown never
// disagree. It imports results and plots only.
package report
