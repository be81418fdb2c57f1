package perf

// MedianBaseline is medianBaseline, for the external tests.
var MedianBaseline = medianBaseline

// Violations is violations, for the external tests.
var Violations = violations
