package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The terminal is the third format over the same blocks: headings and
// paragraphs as lines, tables aligned in columns, charts left out. What a
// fact says (safety, fairness, a suite's tally) comes from one function
// that every format calls.

// writeText renders blocks as plain text for a terminal.
func writeText(w io.Writer, blocks []block) error {
	var b strings.Builder
	for _, bl := range blocks {
		switch x := bl.(type) {
		case heading:
			b.WriteString(x.text)
			if x.badge != nil {
				fmt.Fprintf(&b, "  [%s]", x.badge.text)
			}
			b.WriteString("\n")
		case para:
			b.WriteString(x.text)
			b.WriteString("\n")
		case table:
			textTable(&b, x)
		case bullets:
			for _, it := range x.items {
				fmt.Fprintf(&b, "%s\n", it)
			}
		case pre:
			fmt.Fprintf(&b, "%s\n", strings.TrimRight(x.text, "\n"))
		case chart: // a terminal shows no charts
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// textTable aligns a table's columns: figures (right) to the right, with
// the first column, the names, padded so that it reads left-aligned.
func textTable(b *strings.Builder, t table) {
	if !t.right {
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		if len(t.head) > 0 {
			fmt.Fprintf(tw, "%s%s\n", t.indent, strings.Join(t.head, "\t"))
		}
		for _, row := range t.rows {
			fmt.Fprintf(tw, "%s%s\n", t.indent, strings.Join(cellTexts(row), "\t"))
		}
		tw.Flush()
		return
	}
	width := 0
	if len(t.head) > 0 {
		width = len([]rune(t.head[0]))
	}
	for _, row := range t.rows {
		if len(row) > 0 {
			width = max(width, len([]rune(row[0].text)))
		}
	}
	pad := func(cols []string) string {
		if len(cols) == 0 {
			return ""
		}
		first := cols[0] + strings.Repeat(" ", width-len([]rune(cols[0])))
		return t.indent + strings.Join(append([]string{first}, cols[1:]...), "\t") + "\t"
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(t.head) > 0 {
		fmt.Fprintln(tw, pad(t.head))
	}
	for _, row := range t.rows {
		fmt.Fprintln(tw, pad(cellTexts(row)))
	}
	tw.Flush()
}

func cellTexts(row []cell) []string {
	out := make([]string, len(row))
	for i, c := range row {
		out[i] = c.text
	}
	return out
}

// line is a terminal line: label in a 12-column margin, then text.
func line(label, text string) para { return para{text: fmt.Sprintf("%-12s%s", label, text)} }

// blank is an empty line.
var blank = para{}
