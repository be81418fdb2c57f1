package perf

// MedianBaseline is medianBaseline, for the external tests.
var MedianBaseline = medianBaseline

// Violations is violations, for the external tests.
var Violations = violations

// MedianRound is medianRound, for the external tests.
var MedianRound = medianRound

// RoundOf is roundOf, for the external tests.
var RoundOf = roundOf

// RoundOrder is roundOrder, for the external tests.
var RoundOrder = roundOrder

// ResetPeakRSS is resetPeakRSS, for the external tests.
var ResetPeakRSS = resetPeakRSS
