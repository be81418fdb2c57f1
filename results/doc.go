// Package results will own what a run measured: HdrHistogram latencies,
// throughput series, fairness metrics, the mutual-exclusion safety checker
// and versioned result files. It imports no other package of this module.
//
// Filled by issue 4; empty until then.
package results
