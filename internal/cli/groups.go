package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/taskcli"
)

// ExitUsage is the exit code of a command line that is wrong as written: it
// names no command (an unknown subcommand, or a group without one), a flag
// a command does not have, or too many or too few arguments, as argparse's:
// a cron job that calls a command that does not exist must not pass
// silently, and an in-task script must not read a typo as a documented
// outcome (`weir task-state get`'s 1, "no such key").
const ExitUsage = 2

// groupAnnotation marks a group command: its action only refuses the
// command line (the CLI reference shows no usage line for it).
const groupAnnotation = "weir.group"

// strictGroups makes every group command (one with subcommands and no
// action of its own), the root included, refuse a missing or unknown
// subcommand with ExitUsage and a "did you mean" hint instead of printing
// its help and exiting 0.
func strictGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictGroups(sub)
	}
	if !c.HasSubCommands() || c.Run != nil || c.RunE != nil {
		return
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[groupAnnotation] = "true"
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, s := range cmd.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		if len(args) == 0 {
			_ = cmd.Help()
			return &taskcli.ExitError{Code: ExitUsage, Err: fmt.Errorf("%q needs a command: %s (see %s --help)",
				cmd.CommandPath(), strings.Join(names, ", "), cmd.CommandPath())}
		}
		hint := ""
		if s := suggestions(cmd, args[0]); len(s) > 0 {
			hint = fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
		}
		return &taskcli.ExitError{Code: ExitUsage, Err: fmt.Errorf("unknown command %q for %q%s (its commands: %s)",
			args[0], cmd.CommandPath(), hint, strings.Join(names, ", "))}
	}
}

// usageErrors makes a flag error (an unknown flag, a bad value) and an
// argument-count error of every command under c exit ExitUsage; a command
// that also has subcommands, given a misspelt one, says which it meant.
func usageErrors(c *cobra.Command) {
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &taskcli.ExitError{Code: ExitUsage, Err: err} })
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		orig := c.Args
		if orig == nil || c.Annotations[groupAnnotation] != "" {
			return
		}
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := orig(cmd, args)
			if err == nil {
				return nil
			}
			if len(args) > 0 && cmd.HasSubCommands() {
				if s := suggestions(cmd, args[0]); len(s) > 0 {
					err = fmt.Errorf("%w; did you mean %s %s?", err, cmd.CommandPath(), strings.Join(s, " or "))
				}
			}
			return &taskcli.ExitError{Code: ExitUsage, Err: err}
		}
	}
	walk(c)
}

// suggestions are cmd's subcommands typed may have meant: those it begins,
// and those a typo or two away (one for a word of up to five letters, so
// that "dag" suggests dags and not db).
func suggestions(cmd *cobra.Command, typed string) []string {
	cmd.SuggestionsMinimumDistance = max(1, min(2, len(typed)/3))
	return cmd.SuggestionsFor(typed)
}
