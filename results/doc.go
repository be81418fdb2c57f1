// Package results owns what a run measured and the verdicts drawn from it.
// It imports no other package of this module (but internal/infile, through
// which every package reads its input files), so anything that can produce
// an [Op] stream can use its analyses.
//
// Recording: workers record finished operations ([Op]) into a [Shard]
// (one mutex per shard, shards per core: no global lock on the hot path).
// A [Collector] swaps every shard's interval once a second, merges the
// HdrHistograms (hdrhistogram-go, nanoseconds, 1 µs to 1 h at 3 significant
// digits) into the run's totals, appends them to an interval log in
// HdrHistogram's log format, and adds a [Point] to the throughput series.
//
// Analyses over the recorded operations, run once by [Collector.Finish]:
//   - [CheckSafety]: two owners inside one lock at once, at least one
//     writing, each by its own belief ([Op.Acquired] to [Op.Released]),
//     reported with lock, owners and overlap window.
//   - [CheckFIFO]: fair-lock acquisitions that overtook an earlier waiter
//     by more than the send-time slack.
//   - [Handoffs]: wait (called → acquired, for acquisitions that waited on
//     an incompatible holder) and handoff (the lock fell free while owners
//     waited → the first of them acquired), which no single worker can see.
//   - [ComputeFairness]: Jain's index, min/max, coefficient of variation
//     and starved owners over per-owner acquisition counts.
//
// Throughput counts successful operations only: a failed operation (its
// tryLock wait ran out, its connection failed, Redis answered an error, or
// the run's stall bound cut it) is an attempt, counted by class with its
// first messages verbatim. [Result.Failures] says, for every consumer
// alike, why a run's figures do not stand (too many failures, none
// succeeded, Redis stalled or failed everything for a while); safety with
// nothing checked is NO DATA, never OK.
//
// [Result] is the versioned result file ([Schema]); [WriteFiles] writes it
// and its interval log atomically. Chaos reports, sweeps and side-by-side
// matrices ([ChaosReport], [Sweep], [Matrix]) are versioned files too, each
// read by one reader that upgrades older versions it still accepts.
//
// Terminal text lives here, in one place: [WriteSummary] prints a run's
// table, and WriteSweepSummary, WriteMatrixSummary, WriteChaosSummary and
// the perf figures' writers the rest; [Compare] renders its own.
// [Compare] gates a run against a baseline (throughput, success ratio,
// acquire p99, new safety violations) and refuses a side with no success; [Merge] adds up runs of one profile on several
// machines, latencies from their added histograms.
//
// hdrhistogram-go's ValueAtQuantile takes a percentile in 0–100: 99 is the
// 99th percentile, 0.99 would be nearly the minimum. [Summarize] is the one
// place that reads percentiles.
package results
