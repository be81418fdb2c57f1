package docs

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/lockbench/lockbench/scenarios"
)

var update = flag.Bool("update", false, "rewrite README.md's package map and table of the matrix's expectations from the code")

// root is the module's directory, two levels above this package.
const root = "../.."

const (
	mapStart = "<!-- package map: generated from each package's doc comment and imports by go test ./internal/docs -update -->"
	mapEnd   = "<!-- end of package map -->"
)

// row is one package in the map: its path in the module, its job (the
// first sentence of its doc comment without "Package x"), and the
// packages of this module it imports, outside tests.
type row struct {
	Pkg, Job, Imports string
}

// packages lists the module's packages with go list, as rows.
func packages(t *testing.T) []row {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Name}}\t{{.Doc}}\t{{join .Imports \" \"}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	prefix := strings.TrimSpace(string(mod)) + "/"
	var rows []row
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 4 {
			t.Fatalf("go list line %q: want 4 tab-separated fields", line)
		}
		var ours []string
		for imp := range strings.FieldsSeq(f[3]) {
			if rel, ok := strings.CutPrefix(imp, prefix); ok {
				ours = append(ours, "`"+rel+"`")
			}
		}
		rows = append(rows, row{Pkg: strings.TrimPrefix(f[0], prefix), Job: job(f[1], f[2]), Imports: strings.Join(ours, ", ")})
	}
	return rows
}

// job is a doc comment's first sentence said as a job: "Package guard
// counts lost updates." is "counts lost updates.", and "Command bench
// measures locks." is "measures locks.".
func job(name, synopsis string) string {
	if rest, ok := strings.CutPrefix(synopsis, "Package "+name+" "); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(synopsis, "Command "); ok && name == "main" {
		if _, rest, ok = strings.Cut(rest, " "); ok {
			return rest
		}
	}
	return synopsis
}

// table renders rows as the README's Markdown table.
func table(rows []row) string {
	var b strings.Builder
	b.WriteString("| package | job | imports of ours |\n| --- | --- | --- |\n")
	for _, r := range rows {
		imports := r.Imports
		if imports == "" {
			imports = "none"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Pkg, strings.ReplaceAll(r.Job, "|", `\|`), imports)
	}
	return b.String()
}

// parseTable reads the rows of a table written by table.
func parseTable(s string) ([]row, error) {
	var rows []row
	for i, line := range slices.Collect(strings.Lines(strings.TrimSpace(s))) {
		if i < 2 {
			continue
		}
		cells := splitCells(strings.TrimSpace(line))
		if len(cells) != 3 {
			return nil, fmt.Errorf("table line %q: want 3 cells", line)
		}
		imports := cells[2]
		if imports == "none" {
			imports = ""
		}
		rows = append(rows, row{Pkg: strings.Trim(cells[0], "`"), Job: strings.ReplaceAll(cells[1], `\|`, "|"), Imports: imports})
	}
	return rows, nil
}

// splitCells splits a Markdown table line at its unescaped bars.
func splitCells(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' && i+1 < len(line) && line[i+1] == '|' {
			cur.WriteString(`\|`)
			i++
			continue
		}
		if line[i] == '|' {
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(line[i])
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// diff is one way the map disagrees with the packages.
type diff struct {
	Pkg  string
	What string // "missing", "extra", "job" or "imports"
	Want string // what the package says
}

// compare lists where documented disagrees with actual, package by package.
func compare(documented, actual []row) []diff {
	var ds []diff
	doc := map[string]row{}
	for _, r := range documented {
		doc[r.Pkg] = r
	}
	seen := map[string]bool{}
	for _, a := range actual {
		seen[a.Pkg] = true
		d, ok := doc[a.Pkg]
		switch {
		case !ok:
			ds = append(ds, diff{a.Pkg, "missing", a.Job})
		case d.Job != a.Job:
			ds = append(ds, diff{a.Pkg, "job", a.Job})
		case d.Imports != a.Imports:
			ds = append(ds, diff{a.Pkg, "imports", a.Imports})
		}
	}
	for _, d := range documented {
		if !seen[d.Pkg] {
			ds = append(ds, diff{d.Pkg, "extra", ""})
		}
	}
	return ds
}

// readmeMap returns README.md and the span of its package map's table.
func readmeMap(t *testing.T) (readme string, start, end int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme = string(b)
	i := strings.Index(readme, mapStart)
	j := strings.Index(readme, mapEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md: no package map between %q and %q", mapStart, mapEnd)
	}
	return readme, i + len(mapStart) + 1, j
}

// TestPackageMap: README's package map lists every package of the module,
// and no other, each with the first sentence of its doc comment and its
// imports of ours.
func TestPackageMap(t *testing.T) {
	readme, start, end := readmeMap(t)
	actual := packages(t)
	if *update {
		readme = readme[:start] + table(actual) + readme[end:]
		if err := os.WriteFile(filepath.Join(root, "README.md"), []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	documented, err := parseTable(readme[start:end])
	if err != nil {
		t.Fatalf("README.md's package map: %v", err)
	}
	for _, d := range compare(documented, actual) {
		switch d.What {
		case "missing":
			t.Errorf("README.md's package map lacks %s", d.Pkg)
		case "extra":
			t.Errorf("README.md's package map lists %s, which is not a package of the module", d.Pkg)
		case "job":
			t.Errorf("README.md's package map: %s's job is not its doc comment's first sentence, %q", d.Pkg, d.Want)
		case "imports":
			t.Errorf("README.md's package map: %s imports %s", d.Pkg, d.Want)
		}
	}
	if t.Failed() {
		t.Log("go test ./internal/docs -update rewrites the map")
	}
}

// TestCompareCatchesPlantedErrors plants an omission, an extra row, a
// stale job and stale imports in a map and sees each named.
func TestCompareCatchesPlantedErrors(t *testing.T) {
	actual := []row{
		{"guard", "counts lost updates.", ""},
		{"perf", "measures implementations.", "`impls`, `lockimpl`"},
		{"report", "writes every word.", "`plots`, `results`"},
		{"results", "holds what a run measured.", ""},
	}
	documented, err := parseTable(table([]row{
		// guard left out.
		{"perf", "measures implementations.", "`impls`, `redisson`"},
		{"report", "writes reports.", "`plots`, `results`"},
		{"results", "holds what a run measured.", ""},
		{"matrix", "the old one.", ""},
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := compare(documented, actual)
	want := []diff{
		{"guard", "missing", "counts lost updates."},
		{"perf", "imports", "`impls`, `lockimpl`"},
		{"report", "job", "writes every word."},
		{"matrix", "extra", ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("compare: %+v, want %+v", got, want)
	}
	if ds := compare(actual, actual); len(ds) != 0 {
		t.Errorf("compare of a map with itself: %+v", ds)
	}
}

// TestTableRoundTrip: what table writes, parseTable reads back, escaped
// bars included.
func TestTableRoundTrip(t *testing.T) {
	rows := []row{{"a", "does x | y.", "`b`"}, {"b", "does z.", ""}}
	got, err := parseTable(table(rows))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, rows) {
		t.Errorf("round trip: %+v, want %+v", got, rows)
	}
}

// TestLibrarySnippet: README.md's Go snippet is lockimpl's runnable
// Example, line for line in the same order (lines left out are allowed),
// so what the README shows compiles and runs. Comments and indentation do
// not count, and the example's test address stands for a literal one.
func TestLibrarySnippet(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, snippet, ok := strings.Cut(string(b), "```go\n")
	if !ok {
		t.Fatal("README.md has no ```go snippet")
	}
	snippet, _, _ = strings.Cut(snippet, "```")
	src, err := os.ReadFile(filepath.Join(root, "lockimpl", "example_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "\nfunc Example() {\n")
	if !ok {
		t.Fatal("lockimpl/example_test.go has no func Example")
	}
	body, _, _ = strings.Cut(body, "\n}\n")
	var example []string
	for line := range strings.Lines(body) {
		if l := codeLine(line); l != "" {
			example = append(example, strings.ReplaceAll(l, "exampleAddr()", `"localhost:6379"`))
		}
	}
	next := 0
	for line := range strings.Lines(snippet) {
		l := codeLine(line)
		if l == "" {
			continue
		}
		i := slices.Index(example[next:], l)
		if i < 0 {
			t.Errorf("README.md's snippet line %q is not in lockimpl's Example (after the line before it)", l)
			continue
		}
		next += i + 1
	}
}

// codeLine is a Go line without its indentation and trailing comment.
func codeLine(line string) string {
	if i := strings.Index(line, "//"); i >= 0 && !strings.Contains(line[:i], `"`) {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinks: every relative link in README.md and docs/*.md names a file
// that exists and, with a #fragment, a heading in it.
func TestLinks(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: %v", rel, target, err)
				continue
			}
			if frag == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			if !slices.Contains(anchors(t, path), frag) {
				t.Errorf("%s: link %s: no heading with that anchor in %s", rel, target, file)
			}
		}
	}
}

// anchors lists the anchors GitHub gives a Markdown file's headings.
func anchors(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		a := slug(strings.TrimLeft(line, "#"))
		if n := seen[a]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TestSlug: anchors as GitHub makes them.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		" Who is the bottleneck":                       "who-is-the-bottleneck",
		" `bench sweep`: capacity planning":            "bench-sweep-capacity-planning",
		" Lost updates, and what each mitigation buys": "lost-updates-and-what-each-mitigation-buys",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

var docPathRE = regexp.MustCompile(`\bdocs/[a-z0-9-]+\.md\b`)

// TestDocPathsInGo: every docs/*.md page a Go file names exists, so a
// package doc that sends its reader there is not sending them nowhere.
func TestDocPathsInGo(t *testing.T) {
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, page := range docPathRE.FindAllString(string(b), -1) {
			if _, err := os.Stat(filepath.Join(root, page)); err != nil {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s names %s: %v", rel, page, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

const (
	expectStart = "<!-- matrix expectations: generated from the scenarios' expected verdicts by go test ./internal/docs -update -->"
	expectEnd   = "<!-- end of matrix expectations -->"
)

// TestMatrixExpectations: README's table of the matrix's expected
// verdicts is the one chaos matrix judges by.
func TestMatrixExpectations(t *testing.T) {
	path := filepath.Join(root, "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, expectStart), strings.Index(readme, expectEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md: no table of expectations between %q and %q", expectStart, expectEnd)
	}
	start := i + len(expectStart) + 1
	want := scenarios.ExpectationsMarkdown(false)
	if *update {
		if err := os.WriteFile(path, []byte(readme[:start]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := readme[start:j]; got != want {
		t.Errorf("README.md's table of the matrix's expectations differs from the scenarios' (go test ./internal/docs -update rewrites it):\n%s\nwant:\n%s", got, want)
	}
}
