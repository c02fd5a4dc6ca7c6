// Package cliflags is the command line of Warren's commands: flags that fall back to
// environment variables (a flag given on the command line wins), positional arguments refused.
package cliflags

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// ErrUsage: the command line is wrong, and ParseArgs (or the flag package) said why.
var ErrUsage = errors.New("usage")

// Set is a flag set whose flags name their environment variables.
type Set struct {
	*flag.FlagSet
	command string
	envOf   map[string]string // flag name → environment variable
}

// New returns an empty set for command. It prints nothing itself: the command prints its
// usage where it belongs (stdout for -h, stderr for a mistake).
func New(command string) *Set {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.Usage = func() {}
	return &Set{FlagSet: fs, command: command, envOf: map[string]string{}}
}

// String defines a string flag read from env when not given.
func (s *Set) String(p *string, name, env, def, help string) {
	s.envOf[name] = env
	s.StringVar(p, name, def, help+" ["+env+"]")
}

// Int defines an int flag read from env when not given.
func (s *Set) Int(p *int, name, env string, def int, help string) {
	s.envOf[name] = env
	s.IntVar(p, name, def, help+" ["+env+"]")
}

// Duration defines a duration flag read from env when not given.
func (s *Set) Duration(p *time.Duration, name, env string, def time.Duration, help string) {
	s.envOf[name] = env
	s.DurationVar(p, name, def, help+" ["+env+"]")
}

// Bool defines a bool flag read from env (true, false, 1, 0, …) when not given.
func (s *Set) Bool(p *bool, name, env string, def bool, help string) {
	s.envOf[name] = env
	s.BoolVar(p, name, def, help+" ["+env+"]")
}

// Value defines a flag of its own type read from env when not given.
func (s *Set) Value(v flag.Value, name, env, help string) {
	s.envOf[name] = env
	s.Var(v, name, help+" ["+env+"]")
}

// ParseArgs reads the command line: flag.ErrHelp for -h, ErrUsage (said why on stderr) for a
// bad flag or a positional argument.
func (s *Set) ParseArgs(args []string, stderr io.Writer) error {
	s.SetOutput(stderr)
	if err := s.FlagSet.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return ErrUsage
	}
	if s.NArg() > 0 {
		what := "unexpected argument"
		if s.NArg() == len(args) {
			what = "unknown command"
		}
		fmt.Fprintf(stderr, "%s: %s %q\n", s.command, what, s.Arg(0))
		return ErrUsage
	}
	return nil
}

// ApplyEnv sets each flag the command line left out from its environment variable, if set.
// The defaults that usage shows stay the built-in ones, so it never prints a secret taken
// from the environment.
func (s *Set) ApplyEnv(env func(string) (string, bool)) error {
	given := map[string]bool{}
	s.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	s.VisitAll(func(f *flag.Flag) {
		name, ok := s.envOf[f.Name]
		if !ok || given[f.Name] || err != nil {
			return
		}
		if v, set := env(name); set {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("invalid value %q for %s: %v", v, name, e)
			}
		}
	})
	return err
}

// Read reads the command line, then the environment for the flags it left out, unless
// versionOnly was set by the command line (a command that only prints its version ignores
// whatever else the environment holds).
func (s *Set) Read(args []string, env func(string) (string, bool), stderr io.Writer, versionOnly *bool) error {
	if err := s.ParseArgs(args, stderr); err != nil || *versionOnly {
		return err
	}
	return s.ApplyEnv(env)
}
