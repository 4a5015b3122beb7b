package tidecli

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidestream/tide/api"
)

// termSafe returns s with every character a terminal would act on written as a Go escape
// instead: C0 controls (ESC, BEL, CR, LF, TAB, ...), DEL, C1 controls (U+0080..U+009F, which
// some terminals read as CSI/OSC), Unicode format characters (bidi overrides, zero-width
// spaces), line and paragraph separators, and bytes that are not UTF-8. Every string the CLI
// prints that came from the network (the AM's REST answers, YARN reports, TaskManager output)
// goes through it, so a cause like "\x1b]0;pwned\a\x1b[2J" cannot retitle or clear the
// terminal and a newline cannot break a table row.
func termSafe(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r < 0x20 || r == 0x7f || unsafeRune(r) {
			return true
		}
		i += size
	}
	return false
}

// unsafeRune: non-ASCII runes a terminal may act on or that hide or reorder text.
func unsafeRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// termSafeArgs escapes the string-like arguments of a format call (strings, errors,
// Stringers); numbers and other values print as they are.
func termSafeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = termSafe(v)
		case error:
			out[i] = termSafe(v.Error())
		case fmt.Stringer:
			out[i] = termSafe(v.String())
		default:
			out[i] = a
		}
	}
	return out
}

// errorText is the text of a failure as the CLI prints it: the AM's messages escaped whole
// (termSafe, line breaks included), everything else escaped except that a line break stays
// a line break, indented so that what follows cannot pass for a line of its own (local
// errors such as a configuration's list of problems span lines).
func errorText(err error) string {
	text := err.Error()
	var se *api.StatusError
	if errors.As(err, &se) {
		for _, m := range se.Messages {
			if m != "" {
				text = strings.ReplaceAll(text, m, termSafe(m))
			}
		}
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = termSafe(l)
	}
	return strings.Join(lines, "\n  ")
}
