package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agext/levenshtein"
)

// MaxQuoted is how many characters of a caller's value an error message repeats: enough to
// recognise it, never enough to turn a huge value into a huge error body.
const MaxQuoted = 100

// Clip returns s cut to MaxQuoted runes, ending in "…" when it was cut. Every error message
// and error detail that repeats a value from the request goes through Clip (or Quote).
func Clip(s string) string {
	n := 0
	for i := range s {
		if n == MaxQuoted {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// Quote is Clip in Go quotes (like %q): for values inside a message.
func Quote(s string) string { return strconv.Quote(Clip(s)) }

// MaxMessage is how many characters of a library's message (cel-go's) an error repeats.
const MaxMessage = 2 * MaxQuoted

// singleQuoted is a token a library's message quotes, e.g. cel-go's 'name'.
var singleQuoted = regexp.MustCompile(`'[^']*'`)

// ClipMessage shortens a library's message at sensible boundaries: each quoted token (which
// repeats the caller's input) is clipped inside its quotes, and a message still longer than
// MaxMessage runes is cut before the word in which the limit falls, so that no quote is left
// open and no word is cut: a long name in "undeclared reference to 'name' (in container …)"
// is clipped, its quote closed and the rest of the message kept.
func ClipMessage(s string) string {
	s = singleQuoted.ReplaceAllStringFunc(s, func(q string) string { return "'" + Clip(q[1:len(q)-1]) + "'" })
	n := 0
	for i := range s {
		if n == MaxMessage {
			if space := strings.LastIndexByte(s[:i], ' '); space > len(s[:i])/2 {
				i = space
			}
			return strings.TrimRight(s[:i], " ,;:") + " …"
		}
		n++
	}
	return s
}

// badChar describes the first control character (Unicode Cc: C0, DEL, C1) that allowed does
// not accept, or the first invalid UTF-8 byte, in s; "" when there is none.
func badChar(s string, allowed func(rune) bool) string {
	for i, c := range s {
		if c == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return fmt.Sprintf("invalid UTF-8 at byte %d", i)
			}
		}
		if unicode.IsControl(c) && !allowed(c) {
			return fmt.Sprintf("the control character %U at byte %d", c, i)
		}
	}
	return ""
}

func noneAllowed(rune) bool { return false }

// lineBreaksAndTabs are the control characters free text may hold.
func lineBreaksAndTabs(c rune) bool { return c == '\t' || c == '\n' || c == '\r' }

// Identifier refuses control characters (tab and newline included) and invalid UTF-8 in a
// name, domain, label, address or any other value that identifies something. code is the
// family's code for a bad value of field.
func Identifier(code, field, value string) error {
	if bad := badChar(value, noneAllowed); bad != "" {
		return violation(code, field, "The value %s of %s contains %s; control characters are not allowed here.", Quote(value), field, bad)
	}
	return nil
}

// FreeText refuses control characters other than tab, newline and carriage return, and
// invalid UTF-8, in descriptions, metadata and other free text.
func FreeText(code, field, value string) error {
	if bad := badChar(value, lineBreaksAndTabs); bad != "" {
		return violation(code, field, "The %s contains %s; of the control characters only tab, newline and carriage return are allowed.", field, bad)
	}
	return nil
}

// Closest returns the name of names nearest to s by edit distance (the first of equals),
// or "" when none is near: at most half of s's characters changed. An error for an unknown
// name suggests it, so a near miss needs no list to be read.
func Closest(s string, names []string) string {
	n := utf8.RuneCountInString(s)
	if n > 2*MaxQuoted {
		return ""
	}
	best, bestDist := "", n/2+1
	for _, name := range names {
		if d := levenshtein.Distance(s, name, nil); d < bestDist {
			best, bestDist = name, d
		}
	}
	return best
}

// didYouMean is the sentence an unknown-name error ends with: Closest, or nothing.
func didYouMean(s string, names []string) string {
	if c := Closest(s, names); c != "" {
		return " Did you mean " + strconv.Quote(c) + "?"
	}
	return ""
}
