package results_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// finished is a small collected result with an interval log and metadata.
func finished(t *testing.T) *results.Result {
	t.Helper()
	c := results.NewCollector(base, 1, 0)
	c.Shard(0).Record(sec(0, 0, results.Exclusive, 1*ms, 2*ms), nil, nil)
	c.Shard(0).Record(sec(1, 0, results.Exclusive, 3*ms, 4*ms), nil, nil)
	c.Shard(0).RecordValue(results.Ping, 80*us)
	r := c.Finish(base.Add(2*time.Second), false, 3, results.Analysis{Labels: labels})
	r.Meta = results.Meta{
		Lockbench: "test", Go: "go1.26", Host: "h", GOMAXPROCS: 4,
		Start:   time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC),
		Profile: "mixed/rw lock", Workload: "closed loop", Args: []string{"-x"},
	}
	r.Profile = map[string]any{"name": "mixed", "owners": 2.0}
	if len(r.IntervalLog()) == 0 {
		t.Fatal("collected result has no interval log")
	}
	return r
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func TestStem(t *testing.T) {
	start := time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	tests := []struct {
		profile, impl, want string
	}{
		{"mixed", "", "mixed-20240102T020405Z"}, // converted to UTC
		{"a/b c\\d", "", "a_b_c_d-20240102T020405Z"},
		{"", "", "run-20240102T020405Z"},
		{"mutex", "lockimpl", "mutex-20240102T020405Z"},
		{"mutex", "redsync", "mutex-redsync-20240102T020405Z"},
	}
	for _, tt := range tests {
		r := &results.Result{Meta: results.Meta{Profile: tt.profile, Impl: tt.impl, Start: start}}
		if got := r.Stem(); got != tt.want {
			t.Errorf("Stem(%q) = %q, want %q", tt.profile, got, tt.want)
		}
	}
}

func TestWriteFilesAndReadFile(t *testing.T) {
	r := finished(t)
	dir := filepath.Join(t.TempDir(), "out", "nested") // created on demand
	path, err := results.WriteFiles(dir, r)
	if err != nil {
		t.Fatalf("WriteFiles: %v", err)
	}
	stem := "mixed_rw_lock-20240102T030405Z"
	if want := filepath.Join(dir, stem+".json"); path != want {
		t.Errorf("path = %q, want %q", path, want)
	}
	// Exactly the two files: no temp files left behind.
	if got, want := dirNames(t, dir), []string{stem + ".hlog", stem + ".json"}; !slices.Equal(got, want) {
		t.Errorf("dir holds %v, want %v", got, want)
	}
	for _, name := range []string{stem + ".hlog", stem + ".json"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v, want 0644", name, fi.Mode().Perm())
		}
	}
	hlog, err := os.ReadFile(filepath.Join(dir, stem+".hlog"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(hlog, r.IntervalLog()) {
		t.Error("the .hlog file differs from IntervalLog()")
	}
	if r.HistogramLog != stem+".hlog" {
		t.Errorf("HistogramLog = %q, want %q", r.HistogramLog, stem+".hlog")
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("result file is not JSON: %v", err)
	}
	if v, ok := fields["partial"]; !ok || v != false {
		t.Errorf(`"partial" = %v (present %v), want false and present`, v, ok)
	}
	if fields["schema"] != results.Schema || fields["histogram_log"] != stem+".hlog" {
		t.Errorf("schema %v, histogram_log %v", fields["schema"], fields["histogram_log"])
	}
	for _, k := range []string{"meta", "throughput", "errors", "latency_us", "fairness", "safety", "series", "runtime", "measured_s", "warmup_s"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("field %q missing", k)
		}
	}

	got, err := results.ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	// Everything exported round-trips: both encode to the same JSON.
	want, _ := json.Marshal(r)
	again, _ := json.Marshal(got)
	if !bytes.Equal(want, again) {
		t.Errorf("round trip changed the result:\nwrote %s\nread  %s", want, again)
	}
	if !got.Meta.Start.Equal(r.Meta.Start) || got.Latency["hold"] != r.Latency["hold"] || got.Safety.Sections != 2 {
		t.Errorf("round trip: %+v", got)
	}
}

func TestWriteFilesPartial(t *testing.T) {
	dir := t.TempDir()
	r := &results.Result{
		Schema: results.Schema, Partial: true, PartialReason: "interrupted",
		Meta: results.Meta{Profile: "p", Start: base},
	}
	for range 2 { // writing again keeps the first file (see TestWriteFilesNeverReplaces)
		path, err := results.WriteFiles(dir, r)
		if err != nil {
			t.Fatalf("WriteFiles: %v", err)
		}
		got, err := results.ReadFile(path)
		if err != nil {
			t.Fatalf("ReadFile: %v", err)
		}
		if !got.Partial || got.PartialReason != "interrupted" {
			t.Errorf("Partial/Reason = %v/%q", got.Partial, got.PartialReason)
		}
	}
	// No interval log: no .hlog file and no histogram_log field.
	names := dirNames(t, dir)
	if len(names) != 2 || !strings.HasSuffix(names[0], ".json") || !strings.HasSuffix(names[1], ".json") {
		t.Errorf("dir holds %v, want two .json", names)
	}
	if r.HistogramLog != "" {
		t.Errorf("HistogramLog = %q without a log", r.HistogramLog)
	}
}

func TestWriteFilesError(t *testing.T) {
	// dir is a regular file: nothing can be written under it.
	dir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.WriteFiles(dir, finished(t)); err == nil {
		t.Error("WriteFiles into a regular file succeeded")
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name     string
		path     string
		wantErrs []string // substrings of the error
	}{
		{"wrong schema", write("old.json", `{"schema":"lockbench.result/v0","partial":false}`), []string{`"lockbench.result/v0"`, results.Schema, "old.json"}},
		{"no schema", write("none.json", `{"partial":true}`), []string{`schema ""`}},
		{"not JSON", write("bad.json", `{"schema":`), []string{"bad.json"}},
		{"missing file", filepath.Join(dir, "missing.json"), []string{"missing.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := results.ReadFile(tt.path)
			if err == nil {
				t.Fatalf("ReadFile succeeded: %+v", r)
			}
			if r != nil {
				t.Errorf("ReadFile returned a result with its error")
			}
			for _, s := range tt.wantErrs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

// Two runs started in the same second never overwrite each other.
func TestWriteFilesNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	var paths []string
	for i := range 3 {
		r := &results.Result{Schema: results.Schema, Meta: results.Meta{Profile: "rw90", Start: start}, Throughput: results.Throughput{Ops: int64(i + 1)}}
		p, err := results.WriteFiles(dir, r)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Base(p))
	}
	want := []string{"rw90-20261121T100000Z.json", "rw90-20261121T100000Z-2.json", "rw90-20261121T100000Z-3.json"}
	for i, p := range paths {
		if p != want[i] {
			t.Errorf("run %d written as %s, want %s", i, p, want[i])
		}
		r, err := results.ReadFile(filepath.Join(dir, p))
		if err != nil || r.Throughput.Ops != int64(i+1) {
			t.Errorf("%s: %v, ops %d, want %d", p, err, r.Throughput.Ops, i+1)
		}
	}
}
