package perf

// MedianBaseline is medianBaseline, for the external tests.
var MedianBaseline = medianBaseline
