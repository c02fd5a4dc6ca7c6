package cliflags

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
)

// Markdown is the set's flag table for a README: every flag, in name order, with its
// environment variable, default and help, as its definitions say.
func (s *Set) Markdown() string {
	var b strings.Builder
	b.WriteString("| Flag | Environment | Default | Meaning |\n|---|---|---|---|\n")
	s.VisitAll(func(f *flag.Flag) {
		env, def := s.envOf[f.Name], ""
		help := strings.TrimSuffix(f.Usage, " ["+env+"]")
		if env != "" {
			env = "`" + env + "`"
		}
		if f.DefValue != "" && f.DefValue != "0s" && !(f.DefValue == "false" && isBool(f)) {
			def = "`" + f.DefValue + "`"
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n", f.Name, env, def, strings.ReplaceAll(help, "|", `\|`))
	})
	return b.String()
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// ReplaceTable puts table between the markers of command's flag table in doc:
// "<!-- flags:COMMAND -->" and "<!-- end flags:COMMAND -->", each on a line of its own.
func ReplaceTable(doc []byte, command, table string) ([]byte, error) {
	start, end := []byte("<!-- flags:"+command+" -->\n"), []byte("<!-- end flags:"+command+" -->")
	i, j := bytes.Index(doc, start), bytes.Index(doc, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("the markers %q and %q are missing", start, end)
	}
	i += len(start)
	return append(append(append([]byte{}, doc[:i]...), table...), doc[j:]...), nil
}

// SyncREADME checks that the README at path holds the set's current flag table, or with
// update writes it there: a command's test calls it, so that a flag's definition and its
// documentation cannot part.
func (s *Set) SyncREADME(path string, update bool) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	want, err := ReplaceTable(doc, s.command, s.Markdown())
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case bytes.Equal(doc, want):
		return nil
	case update:
		return os.WriteFile(path, want, 0o644)
	}
	return fmt.Errorf("%s: the flag table of %s is not current; run 'go test ./cmd/%s -run TestREADMEFlagTable -update'", path, s.command, s.command)
}
