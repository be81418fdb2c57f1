// Package results holds what a run measured and the verdicts drawn from
// it: records, histograms, the safety checker and the file schemas.
//
// It imports no other package of this module (but internal/infile, through
// which every package reads its input files, and lockimpl/kind, the lock
// kinds' names), so anything that can produce an [Op] stream can use its
// analyses. Its only words are the one-line reasons its files carry
// (a [Failure], a comparison's regressions and notes, a merge's notes);
// package report writes every other word.
//
// Workers record finished operations ([Op]) into a [Shard] (shards per
// core: no global lock on the hot path). A [Collector] swaps every shard's
// interval once a second, merges the HdrHistograms into the run's totals
// and an interval log, and adds a [Point] to the throughput series.
// [Collector.Finish] runs the analyses once: [CheckSafety] (two owners
// inside one lock at once, at least one writing, each by its own belief),
// [CheckFIFO], [Handoffs] and [ComputeFairness]. [Result.Failures] says
// why a run's figures do not stand; safety with nothing checked is NO
// DATA, never OK. [Compare] gates a run against a baseline and [Merge]
// adds up runs of one profile on several machines.
//
// hdrhistogram-go's ValueAtQuantile takes a percentile in 0–100: 99 is the
// 99th percentile, 0.99 would be nearly the minimum. [Summarize] is the one
// place that reads percentiles.
package results
