package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/taskcli"
)

// ExitUsage is the exit code of a command line that names no command
// (an unknown subcommand, or a group without one), as argparse's: a cron
// job that calls a command that does not exist must not pass silently.
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
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			hint = fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
		}
		return &taskcli.ExitError{Code: ExitUsage, Err: fmt.Errorf("unknown command %q for %q%s (its commands: %s)",
			args[0], cmd.CommandPath(), hint, strings.Join(names, ", "))}
	}
}
