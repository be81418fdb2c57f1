package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lockbench/lockbench/internal/infile"
)

// ChaosSchema names the chaos report format: one scenario's verdict,
// checks, figures and runs. The scenarios package writes it; reports read
// it back next to the result files its runs name. In v2 a run's ops/s
// counts successful operations only; v1 reports are still read.
const ChaosSchema = "lockbench.chaos/v2"

const chaosSchemaV1 = "lockbench.chaos/v1"

// Verdict is a chaos scenario's outcome measured against its expectation.
type Verdict string

// The verdicts. Only Fail (and Incomplete, for an interrupted run) make a
// suite fail; Skipped says the scenario could not run here, never that it
// passed.
const (
	// Pass: every check held and the invariant was kept, as expected.
	Pass Verdict = "PASS"
	// ExpectedViolation: the scenario exists to show a violation, and the
	// checker caught it, with every other check as expected.
	ExpectedViolation Verdict = "EXPECTED VIOLATION DETECTED"
	// Fail: some check came out other than expected; Reason says which.
	Fail Verdict = "FAIL"
	// Skipped: the chosen backend cannot inject this scenario's faults.
	Skipped Verdict = "SKIPPED"
	// Incomplete: interrupted before the checks could be made.
	Incomplete Verdict = "INCOMPLETE"
)

// Check is one expectation of a scenario and what was observed.
type Check struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	OK   bool   `json:"ok"`
}

// Figure is one measured number.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// RunSummary is what a variant's result says about safety, throughput and
// faults; the full result is in File.
type RunSummary struct {
	Variant   string  `json:"variant"`
	File      string  `json:"file,omitempty"`
	Partial   bool    `json:"partial,omitempty"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_s"` // successful operations per second
	// Attempts is every measured operation, successful or not; Errors the
	// failed ones.
	Attempts     int64   `json:"attempts"`
	SuccessRatio float64 `json:"success_ratio"`
	Lost         int64   `json:"lost_acquisitions"`
	Errors       int64   `json:"errors"`
	Safety       Safety  `json:"safety"`
	Events       []Event `json:"events,omitempty"`
	// Guard is the guarded counter's outcome, when the run updated one.
	Guard *Guard `json:"guard,omitempty"`
}

// ChaosReport is one scenario's outcome: the verdict, the checks behind
// it, the figures, the fault plan and each variant's run.
type ChaosReport struct {
	Schema      string    `json:"schema"`
	Scenario    string    `json:"scenario"`
	Description string    `json:"description"`
	Invariant   string    `json:"invariant"`
	Expected    Verdict   `json:"expected"`
	Verdict     Verdict   `json:"verdict"`
	Reason      string    `json:"reason,omitempty"`
	Partial     bool      `json:"partial,omitempty"`
	Quick       bool      `json:"quick"`
	Seed        uint64    `json:"seed"`
	Start       time.Time `json:"start"`
	Seconds     float64   `json:"seconds"`
	Redis       string    `json:"redis,omitempty"`
	Toxiproxy   string    `json:"toxiproxy,omitempty"`
	// Redisson is the Redisson version of variants with Redisson clients.
	Redisson string   `json:"redisson,omitempty"`
	Plan     []string `json:"plan"`
	Checks   []Check  `json:"checks"`
	Figures  []Figure `json:"figures"`
	// Skipped are the variants not run here and why ("redisson: java is
	// not on PATH ..."): the rest of the scenario still ran and counts.
	Skipped []string     `json:"skipped,omitempty"`
	Runs    []RunSummary `json:"runs"`
}

// OK reports whether the verdict is what the scenario expects (a skip is
// not a mismatch).
func (r *ChaosReport) OK() bool {
	return r.Verdict == Pass || r.Verdict == ExpectedViolation || r.Verdict == Skipped
}

// WriteChaosReport writes rep as <dir>/<scenario>-<time>.chaos.json
// (atomically) and returns the path.
func WriteChaosReport(dir string, rep *ChaosReport) (string, error) {
	return writeJSON(dir, fmt.Sprintf("%s-%s.chaos.json", rep.Scenario, Stamp(rep.Start)), rep)
}

// writeJSON writes v, indented, as dir/name (atomically) and returns the
// path.
func writeJSON(dir, name string, v any) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("results: encode %s: %w", name, err)
	}
	path := filepath.Join(dir, name)
	return path, WriteAtomic(path, append(b, '\n'))
}

// ReadChaosReport loads a chaos report, refusing other schemas.
func ReadChaosReport(path string) (*ChaosReport, error) {
	return readVersioned(path, func(r *ChaosReport) string { return r.Schema }, ChaosSchema,
		map[string]func(*ChaosReport){chaosSchemaV1: nil})
}

// readVersioned reads a lockbench file of type T whose schema (what
// schemaOf returns) is current, or one of the older schemas in upgrades,
// which brings such a file up to date (nil: nothing to change). Any other
// schema is refused, naming the one wanted.
func readVersioned[T any](path string, schemaOf func(*T) string, current string, upgrades map[string]func(*T)) (*T, error) {
	var v T
	if err := readJSON(path, &v); err != nil {
		return nil, err
	}
	s := schemaOf(&v)
	if s == current {
		return &v, nil
	}
	up, ok := upgrades[s]
	if !ok {
		return nil, fmt.Errorf("results: %s: schema %q, want %q", path, s, current)
	}
	if up != nil {
		up(&v)
	}
	return &v, nil
}

// readJSON decodes the JSON file at path into v.
func readJSON(path string, v any) error {
	b, err := infile.Read(path, infile.JSON)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("results: %s: %w", path, err)
	}
	return nil
}

// CountVerdicts counts a suite's reports by verdict.
func CountVerdicts(reps []*ChaosReport) map[Verdict]int {
	counts := map[Verdict]int{}
	for _, r := range reps {
		counts[r.Verdict]++
	}
	return counts
}
