// Package report writes every word a person reads: terminal text,
// Markdown and self-contained HTML, from one block model.
//
// [Load] reads result files (with their HdrHistogram logs), chaos reports
// (with their runs), sweeps, the implementations side by side and the
// mitigation matrix, as files or directories, and handles the inputs of
// compare and merge. Content is built once as blocks (headings,
// paragraphs, tables, charts) and each format renders the same blocks, so
// the terminal, Markdown and HTML never disagree. HTML inlines its CSS and
// charts; Markdown writes its charts as PNG files beside it.
//
// It imports results and plots only (and internal/infile, as every reader
// of input files does).
package report
