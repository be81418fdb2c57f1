package report

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// JUnit XML, the subset CI dashboards read (Jenkins, GitLab, GitHub
// test-report actions): one testsuite, one testcase per scenario.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes the reports as JUnit XML to path (atomically): FAIL is
// a failure, INCOMPLETE an error, SKIPPED a skip; the summary of each
// scenario is its system-out.
func WriteJUnit(path string, reps []*results.ChaosReport) error {
	s := junitSuite{Name: "lockbench-chaos"}
	for _, rep := range reps {
		var out strings.Builder
		_ = writeText(&out, chaosSummaryBlocks(rep))
		c := junitCase{Name: rep.Scenario, Classname: "chaos", Time: rep.Seconds, SystemOut: out.String()}
		msg := &junitMessage{Message: string(rep.Verdict) + ": " + rep.Reason, Body: rep.Reason}
		switch rep.Verdict {
		case results.Fail:
			msg.Type = "verdict"
			c.Failure = msg
			s.Failures++
		case results.Incomplete:
			msg.Type = "interrupted"
			c.Error = msg
			s.Errors++
		case results.Skipped:
			c.Skipped = &junitMessage{Message: rep.Reason}
			s.Skipped++
		}
		s.Tests++
		s.Time += rep.Seconds
		s.Cases = append(s.Cases, c)
	}
	b, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("scenarios: %w", err)
		}
	}
	return results.WriteAtomic(path, append([]byte(xml.Header), append(b, '\n')...))
}
