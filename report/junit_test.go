package report_test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

func TestJUnit(t *testing.T) {
	reps := []*results.ChaosReport{
		{Scenario: "a", Verdict: results.Pass, Expected: results.Pass, Seconds: 1.5},
		{Scenario: "b", Verdict: results.ExpectedViolation, Expected: results.ExpectedViolation, Seconds: 2},
		{Scenario: "c", Verdict: results.Fail, Expected: results.Pass, Reason: "run: mutual exclusion: want 0, got 3"},
		{Scenario: "d", Verdict: results.Skipped, Expected: results.Pass, Reason: "external"},
		{Scenario: "e", Verdict: results.Incomplete, Expected: results.Pass, Reason: "interrupted"},
	}
	path := filepath.Join(t.TempDir(), "sub", "chaos.xml")
	if err := report.WriteJUnit(path, reps); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Errors   int `xml:"errors,attr"`
			Skipped  int `xml:"skipped,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	s := doc.Suites[0]
	if s.Tests != 5 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 1 {
		t.Errorf("counts tests=%d failures=%d errors=%d skipped=%d; want 5 1 1 1", s.Tests, s.Failures, s.Errors, s.Skipped)
	}
	if f := s.Cases[2].Failure; f == nil || !strings.Contains(f.Message, "got 3") {
		t.Errorf("the FAIL case's failure: %+v", f)
	}
}
