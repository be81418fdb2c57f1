package results

// Outcome is what happened in a matrix cell, whatever was expected of
// it: what the report and the chart colour the cell by, so that a lost
// update never reads as safe because it was expected.
type Outcome string

// The outcomes, worst first: a cell takes the first that applies.
const (
	// OutcomeLost: updates were lost.
	OutcomeLost Outcome = "lost"
	// OutcomeOverlap: holds overlapped (violations), yet no update was
	// lost: something other than the lock (a fence, luck) kept the data.
	OutcomeOverlap Outcome = "overlap"
	// OutcomeRefused: acquisitions were refused, and nothing was lost
	// and no holds overlapped: safety paid for with availability.
	OutcomeRefused Outcome = "refused"
	// OutcomeNoWrites: no write reached the guarded counter (NoWrites),
	// so its 0 lost updates measure nothing (unless every holder stopped
	// at its loss signal, which the verdict says).
	OutcomeNoWrites Outcome = "no-writes"
	// OutcomeClean: writes landed, none was lost, no holds overlapped.
	OutcomeClean Outcome = "clean"
	// OutcomeSkipped: the cell did not run.
	OutcomeSkipped Outcome = "skipped"
)

// Outcome is what happened in c.
func (c MitigationCell) Outcome() Outcome {
	switch {
	case c.Skipped != "":
		return OutcomeSkipped
	case c.Lost > 0:
		return OutcomeLost
	case c.Violations > 0:
		return OutcomeOverlap
	case c.Refused > 0:
		return OutcomeRefused
	case NoWrites(c.Written, c.Accepted):
		return OutcomeNoWrites
	}
	return OutcomeClean
}
