package results

import (
	"fmt"
	"time"
)

// MitigationSchema identifies mitigation matrix files.
const MitigationSchema = "lockbench.mitigations/v1"

// MitigationMatrix is what each mitigation against lost holds buys under
// each fault, and what it costs on a healthy run: chaos matrix's output.
type MitigationMatrix struct {
	Schema  string    `json:"schema"`
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"`
	Quick   bool      `json:"quick"`
	Seed    uint64    `json:"seed"`
	Store   string    `json:"store"`
	// Server is the lock's server as the first cell that ran found it
	// (Env.Server: "valkey 9.1.2", "redis 7.0.15"); empty when none ran.
	Server string `json:"server,omitempty"`
	// Planted names a bug planted on purpose (to show the gate catches
	// it); empty in real runs.
	Planted     string           `json:"planted,omitempty"`
	Scenarios   []string         `json:"scenarios"`
	Mitigations []string         `json:"mitigations"`
	Cells       []MitigationCell `json:"cells"`
	Costs       []MitigationCost `json:"costs"`
	Partial     bool             `json:"partial,omitempty"`
}

// MitigationCell is one scenario under one mitigation.
type MitigationCell struct {
	Scenario   string  `json:"scenario"`
	Mitigation string  `json:"mitigation"`
	Violations int64   `json:"violations"`
	UnsafeMs   float64 `json:"unsafe_ms"`
	Lost       int64   `json:"lost_updates"`
	Rejected   int64   `json:"rejected_stale"`
	// StaleAccepted are writes applied from holders that knew their lock
	// was lost. A fencing store accepts one only while the holder's token
	// is still the highest it has seen: no newer holder had reached it.
	StaleAccepted int64 `json:"stale_accepted"`
	// RightfulRefused are reads and writes refused from holders that knew
	// of no loss: the token counter went backwards, or the lock was lost
	// under the holder without a word (a server's clock jumped).
	RightfulRefused int64 `json:"rightful_refused"`
	// Fenced: the cell's store refuses stale tokens (a planted broken one
	// does not), so the stale writes it accepted came before any newer
	// holder's token; without a fence, nothing was there to refuse them.
	Fenced bool `json:"fenced,omitempty"`
	// Written are the writes the store applied as their holders saw them,
	// Accepted as the store counted them.
	Written  int64 `json:"written"`
	Accepted int64 `json:"accepted"`
	// Refused are operations a safety setting refused (ErrRefused): their
	// acquisition, or, under min-replicas, their release; availability the
	// cell gave up for its verdict.
	Refused int64 `json:"refused_acquisitions"`
	// Expect is the cell's expected lost updates, Why the reason.
	Expect string `json:"expect"`
	Why    string `json:"why"`
	// OK: the expectation and the scenario's own checks held; Problem
	// says what did not.
	OK      bool   `json:"ok"`
	Problem string `json:"problem,omitempty"`
	Skipped string `json:"skipped,omitempty"`
	File    string `json:"file,omitempty"`
}

// MitigationCost is a mitigation on a healthy run (no fault).
type MitigationCost struct {
	Mitigation   string  `json:"mitigation"`
	OpsPerSec    float64 `json:"ops_per_s"`
	AcquireP50Us float64 `json:"acquire_p50_us"`
	AcquireP99Us float64 `json:"acquire_p99_us"`
	ReleaseP50Us float64 `json:"release_p50_us,omitempty"`
	Lost         int64   `json:"lost_updates"`
	Violations   int64   `json:"violations"`
	// ReplicaDown is the same workload run again with the replica
	// stopped: what the mitigation still grants, and what it refuses.
	ReplicaDown *ReplicaDownCost `json:"replica_down,omitempty"`
	Problem     string           `json:"problem,omitempty"`
}

// ReplicaDownCost is a healthy run's workload with the replica stopped.
type ReplicaDownCost struct {
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_s"`
	// Attempts are the measured acquisitions, Refused those a safety
	// setting refused (ErrRefused), Failed those that failed otherwise.
	Attempts int64 `json:"attempts"`
	Refused  int64 `json:"refused"`
	Failed   int64 `json:"failed"`
	// AcquireP50Us and ReleaseP50Us are the run's medians, beside the
	// healthy run's.
	AcquireP50Us float64 `json:"acquire_p50_us,omitempty"`
	ReleaseP50Us float64 `json:"release_p50_us,omitempty"`
	// Cause says why OpsPerSec fell far below the healthy run's, read
	// from the run's figures; empty where it did not.
	Cause string `json:"cause,omitempty"`
}

// CostFarBelow is how many times under its healthy run's throughput a
// run with the replica (Redlock: a node) down must fall for its cause to
// be given, and missing one to be a problem.
const CostFarBelow = 4

// FarBelow reports whether d ran far below the healthy run c.
func (d ReplicaDownCost) FarBelow(c MitigationCost) bool {
	return d.OpsPerSec*CostFarBelow < c.OpsPerSec
}

// OK reports whether every cell met its expectation and every healthy run
// was clean. A matrix that was interrupted, or in which no cell ran (every
// one skipped), is not OK: it showed nothing.
func (m *MitigationMatrix) OK() bool {
	if m.Ran() == 0 {
		return false
	}
	for _, c := range m.Cells {
		if !c.OK && c.Skipped == "" {
			return false
		}
	}
	for _, c := range m.Costs {
		if c.Problem != "" {
			return false
		}
	}
	return !m.Partial
}

// Ran counts the cells that ran (were not skipped).
func (m *MitigationMatrix) Ran() int {
	n := 0
	for _, c := range m.Cells {
		if c.Skipped == "" {
			n++
		}
	}
	return n
}

// Bad counts the cells that ran and missed their expectation, and the
// healthy runs with a problem.
func (m *MitigationMatrix) Bad() int {
	n := 0
	for _, c := range m.Cells {
		if !c.OK && c.Skipped == "" {
			n++
		}
	}
	for _, c := range m.Costs {
		if c.Problem != "" {
			n++
		}
	}
	return n
}

// PartialNote says what an interrupted matrix shows: written wherever the
// matrix is, so that none reads it as a verdict.
const PartialNote = "PARTIAL: interrupted before every cell and healthy run finished; the figures cover those that did, and the matrix is no verdict"

// Cell returns the cell of scenario and mitigation.
func (m *MitigationMatrix) Cell(scenario, mitigation string) (MitigationCell, bool) {
	for _, c := range m.Cells {
		if c.Scenario == scenario && c.Mitigation == mitigation {
			return c, true
		}
	}
	return MitigationCell{}, false
}

// WriteMitigationMatrix writes m as <dir>/mitigations-<time>.json.
func WriteMitigationMatrix(dir string, m *MitigationMatrix) (string, error) {
	return writeJSON(dir, fmt.Sprintf("mitigations-%s.json", Stamp(m.Start)), m)
}

// ReadMitigationMatrix reads a file WriteMitigationMatrix wrote.
func ReadMitigationMatrix(path string) (*MitigationMatrix, error) {
	return readVersioned(path, func(m *MitigationMatrix) string { return m.Schema }, MitigationSchema, nil)
}

// CellMark is one mark a matrix cell carries beyond its four figures:
// the count, a symbol for the terminal table, words for the report, and
// what it means. Each symbol has one meaning (MitigationMarks lists them).
type CellMark struct {
	Count                  int64
	Symbol, Words, Meaning string
}

var (
	markBeforeNewer = CellMark{Symbol: "~", Words: "stale accepted, no newer token yet",
		Meaning: "writes a fenced store accepted from holders told they had lost the lock while their token was still the highest it had seen (no newer holder had reached it): fencing allows these, and they overwrite no one unless the token counter was lost and tokens repeat (the first figure counts any lost update)"}
	markUnfenced = CellMark{Symbol: "*", Words: "stale written, unfenced",
		Meaning: "writes from holders told they had lost the lock, landed where no fence could refuse them"}
	markRightful = CellMark{Symbol: "?", Words: "refused unwarned",
		Meaning: "reads and writes a fenced store refused from holders told of no loss: either the token counter went backwards and refused a rightful holder, or the lock was lost under the holder before it could be told (a server's clock jumped) and fencing caught what timing could not"}
)

// MitigationMarks are the marks a cell can carry, in the order cells
// show them: the legend.
var MitigationMarks = []CellMark{markBeforeNewer, markUnfenced, markRightful}

// Marks are c's marks, in MitigationMarks' order; none for a cell that
// shows nothing beyond its figures.
func (c MitigationCell) Marks() []CellMark {
	var out []CellMark
	if c.StaleAccepted > 0 {
		m := markUnfenced
		if c.Fenced {
			m = markBeforeNewer
		}
		m.Count = c.StaleAccepted
		out = append(out, m)
	}
	if c.RightfulRefused > 0 {
		m := markRightful
		m.Count = c.RightfulRefused
		out = append(out, m)
	}
	return out
}
