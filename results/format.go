package results

import (
	"fmt"
	"strconv"
	"strings"
)

// ThroughputCounts is the throughput's counts in words, as the summary
// and the report print them: "29,690 successful of 29,690 attempts, 100%"
// or "1,893 successful of 29,690 attempts, 6.38%: 27,797 failed".
func ThroughputCounts(t Throughput) string {
	s := fmt.Sprintf("%s successful of %s, %s", commas(t.Ops), Count(t.Attempts, "attempt"), percent(t.SuccessRatio))
	if t.Failed > 0 {
		s += fmt.Sprintf(": %s failed", commas(t.Failed))
	}
	return s
}

// Percent prints a share (0..1) as a percentage with up to two decimals.
func Percent(v float64) string { return percent(v) }

// FormatUs prints a latency given in microseconds with a unit that keeps
// 3–4 digits (850.0µs, 12.40ms, 2.38s), as the summary table does.
func FormatUs(us float64) string { return dur(us) }

// UsOrDash is FormatUs, or "—" for a figure that was not measured (0).
func UsOrDash(us float64) string {
	if us <= 0 {
		return "—"
	}
	return dur(us)
}

// Times prints a ratio as "1.25×", or "—" when there was nothing to
// compare with (0): a ratio never printed is better than a false 0.00.
func Times(r float64) string {
	if r <= 0 {
		return "—"
	}
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}

// Commas prints n with thousands separators, as the summary table does.
func Commas(n int64) string { return commas(n) }

// Count is n with thousands separators and noun, in the plural unless n
// is 1: "1 run", "0 runs", "1,008 owners", "2 matches". noun is the
// singular (a phrase's last word takes the plural: "critical section").
// Every count a reader sees goes through it, or through Noun where the
// number is written otherwise, so none says "1 runs".
func Count[N ~int | ~int32 | ~int64](n N, noun string) string {
	return commas(int64(n)) + " " + Noun(n, noun)
}

// Noun is noun as n of it are called: the singular for 1, else the
// plural (noun+"es" after s, x, ch or sh, else noun+"s").
func Noun[N ~int | ~int32 | ~int64](n N, noun string) string {
	if n == 1 {
		return noun
	}
	for _, end := range []string{"s", "x", "ch", "sh"} {
		if strings.HasSuffix(noun, end) {
			return noun + "es"
		}
	}
	return noun + "s"
}

// CommasFloat prints v with thousands separators and one decimal.
func CommasFloat(v float64) string { return commasFloat(v) }

// dur prints microseconds with a unit that keeps 3–4 digits.
func dur(us float64) string {
	switch {
	case us < 1000:
		return strconv.FormatFloat(us, 'f', 1, 64) + "µs"
	case us < 1e6:
		return strconv.FormatFloat(us/1e3, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(us/1e6, 'f', 2, 64) + "s"
}

// commas prints n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func commasFloat(v float64) string {
	whole := int64(v)
	frac := int64((v-float64(whole))*10 + 0.5)
	if frac == 10 {
		whole, frac = whole+1, 0
	}
	return commas(whole) + "." + strconv.FormatInt(frac, 10)
}
