package report

import (
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The document model: content is built once as blocks, then rendered.
type block interface{ isBlock() }

type heading struct {
	level int
	text  string
	badge *cell // a verdict next to the title, coloured in HTML
}

type para struct {
	text  string
	class string // "ok", "bad", "warn", "note" or ""
}

type cell struct {
	text  string
	class string
	// mark is a verdict set apart from the text: in HTML a badge of its
	// own class, elsewhere the text's first word.
	mark *cell
	// note explains the cell on hover (HTML's title); other formats
	// carry it elsewhere or not at all.
	note string
}

type table struct {
	head []string
	rows [][]cell
	// right aligns every column but the first (figures).
	right bool
	// indent starts each row on a terminal.
	indent string
	// class is the table's own CSS class (HTML only).
	class string
}

type chart struct {
	name string // file-name stem, unique in the document
	alt  string
	png  []byte
}

type bullets struct{ items []string }

type pre struct{ text string }

func (heading) isBlock() {}
func (para) isBlock()    {}
func (table) isBlock()   {}
func (chart) isBlock()   {}
func (bullets) isBlock() {}
func (pre) isBlock()     {}

// plain is a table cell of text; styled one with a CSS class (HTML only).
func plain(text string) cell                { return cell{text: text} }
func styled(text string, class string) cell { return cell{text: text, class: class} }

// Format is a report's format.
type Format string

// The formats.
const (
	HTML     Format = "html"
	Markdown Format = "md"
)

// FormatFor picks the format from a file name's extension, else def.
func FormatFor(path string, def Format) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown":
		return Markdown
	case ".html", ".htm":
		return HTML
	}
	return def
}

const css = `body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1d1d1f;max-width:1120px;margin:2em auto;padding:0 1.2em}
h1{font-size:1.7em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:2px solid #ddd;padding-bottom:.2em}h3{margin-top:1.6em}h4{margin-bottom:.4em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.92em}th,td{border:1px solid #d0d0d5;padding:.25em .6em;vertical-align:top}
th{background:#f2f2f5;text-align:left}table.num td:not(:first-child){text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;height:auto;border:1px solid #e4e4e8;margin:.4em 0}
pre{background:#f6f6f8;padding:.6em;overflow-x:auto;font-size:.88em}
.ok{color:#116329;font-weight:600}.bad{color:#b3261e;font-weight:700}.warn{color:#9a5b00;font-weight:600}.note{color:#555}
td.ok{background:#e8f5ea}td.bad{background:#fde8e6}td.warn{background:#fff4e0}
.badge{font-size:.6em;padding:.15em .5em;border-radius:.3em;vertical-align:middle;margin-left:.5em;border:1px solid currentColor}`

// writeHTML renders blocks as one self-contained page: charts inline as
// PNG data, no scripts, no external fonts or style sheets.
func writeHTML(w io.Writer, title string, blocks []block) error {
	var b strings.Builder
	e := html.EscapeString
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>%s</title>\n<style>%s</style></head>\n<body>\n", e(title), css+matrixCSS)
	for _, bl := range blocks {
		switch x := bl.(type) {
		case heading:
			fmt.Fprintf(&b, "<h%d id=\"%s\">%s", x.level, anchor(x.text), e(x.text))
			if x.badge != nil {
				fmt.Fprintf(&b, " <span class=\"badge %s\">%s</span>", x.badge.class, e(x.badge.text))
			}
			fmt.Fprintf(&b, "</h%d>\n", x.level)
		case para:
			if x.class != "" {
				fmt.Fprintf(&b, "<p class=\"%s\">%s</p>\n", x.class, e(x.text))
			} else {
				fmt.Fprintf(&b, "<p>%s</p>\n", e(x.text))
			}
		case table:
			var classes []string
			if x.right {
				classes = append(classes, "num")
			}
			if x.class != "" {
				classes = append(classes, x.class)
			}
			class := ""
			if len(classes) > 0 {
				class = fmt.Sprintf(` class="%s"`, strings.Join(classes, " "))
			}
			fmt.Fprintf(&b, "<table%s>\n", class)
			if len(x.head) > 0 {
				b.WriteString("<tr>")
				for _, h := range x.head {
					// A break after "+" lets a combined name wrap as a
					// hyphenated one does.
					fmt.Fprintf(&b, "<th>%s</th>", strings.ReplaceAll(e(h), "+", "+<wbr>"))
				}
				b.WriteString("</tr>\n")
			}
			for _, row := range x.rows {
				b.WriteString("<tr>")
				for _, cl := range row {
					htmlCell(&b, cl)
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</table>\n")
		case chart:
			fmt.Fprintf(&b, "<p><img alt=\"%s\" src=\"data:image/png;base64,%s\"></p>\n", e(x.alt), base64.StdEncoding.EncodeToString(x.png))
		case bullets:
			b.WriteString("<ul>\n")
			for _, it := range x.items {
				fmt.Fprintf(&b, "<li>%s</li>\n", e(it))
			}
			b.WriteString("</ul>\n")
		case pre:
			fmt.Fprintf(&b, "<pre>%s</pre>\n", e(x.text))
		}
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// htmlCell writes a table cell: its class, its note as a tooltip, its
// mark as a badge, and its text's lines as lines.
func htmlCell(b *strings.Builder, cl cell) {
	e := html.EscapeString
	b.WriteString("<td")
	if cl.class != "" {
		fmt.Fprintf(b, ` class="%s"`, cl.class)
	}
	if cl.note != "" {
		fmt.Fprintf(b, ` title="%s"`, e(cl.note))
	}
	b.WriteString(">")
	if cl.mark != nil {
		fmt.Fprintf(b, `<span class="%s">%s</span>`, cl.mark.class, e(cl.mark.text))
	}
	fmt.Fprintf(b, "%s</td>", strings.ReplaceAll(e(cl.text), "\n", "<br>"))
}

// writeMarkdown renders blocks as Markdown; charts are written as PNG
// files into assetDir and linked by assetRef (relative to the document).
func writeMarkdown(w io.Writer, blocks []block, assetDir, assetRef string) error {
	var b strings.Builder
	for _, bl := range blocks {
		switch x := bl.(type) {
		case heading:
			fmt.Fprintf(&b, "%s %s", strings.Repeat("#", x.level), mdText(x.text))
			if x.badge != nil {
				fmt.Fprintf(&b, " — **%s**", mdText(x.badge.text))
			}
			b.WriteString("\n\n")
		case para:
			switch x.class {
			case "ok", "bad", "warn":
				fmt.Fprintf(&b, "**%s**\n\n", mdText(x.text))
			case "note":
				fmt.Fprintf(&b, "_%s_\n\n", mdText(x.text))
			default:
				fmt.Fprintf(&b, "%s\n\n", mdText(x.text))
			}
		case table:
			if len(x.head) == 0 && len(x.rows) > 0 {
				// Markdown's tables need a head: a headless table's first
				// row serves.
				x.head, x.rows = cellTexts(x.rows[0]), x.rows[1:]
			}
			b.WriteString("|")
			for _, h := range x.head {
				fmt.Fprintf(&b, " %s |", mdCell(h))
			}
			b.WriteString("\n|")
			for i := range x.head {
				if x.right && i > 0 {
					b.WriteString("---:|")
				} else {
					b.WriteString("---|")
				}
			}
			b.WriteString("\n")
			for _, row := range x.rows {
				b.WriteString("|")
				for _, cl := range row {
					t := mdCell(cl.text)
					if cl.class == "bad" && t != "" {
						t = "**" + t + "**"
					}
					if cl.mark != nil {
						t = mdText(cl.mark.text) + " " + t
					}
					fmt.Fprintf(&b, " %s |", t)
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		case chart:
			if err := os.MkdirAll(assetDir, 0o755); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			if err := os.WriteFile(filepath.Join(assetDir, x.name+".png"), x.png, 0o644); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			// <…> lets the destination hold spaces (CommonMark).
			fmt.Fprintf(&b, "![%s](<%s/%s.png>)\n\n", mdText(x.alt), assetRef, x.name)
		case bullets:
			for _, it := range x.items {
				fmt.Fprintf(&b, "- %s\n", mdText(it))
			}
			b.WriteString("\n")
		case pre:
			fmt.Fprintf(&b, "```\n%s\n```\n\n", strings.TrimRight(x.text, "\n"))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var mdSpecial = regexp.MustCompile("([\\\\`*_\\[\\]<>#|])")

// mdText escapes what Markdown would read as markup.
func mdText(s string) string { return mdSpecial.ReplaceAllString(s, `\$1`) }

// mdCell is mdText in a table cell, its lines broken as GitHub's tables
// allow.
func mdCell(s string) string { return strings.ReplaceAll(mdText(s), "\n", "<br>") }

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// anchor is a heading's id.
func anchor(s string) string {
	return strings.Trim(nonWord.ReplaceAllString(strings.ToLower(s), "-"), "-")
}
