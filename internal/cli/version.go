package cli

import (
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/execclient"
)

// version is Weir's version, set at build time with -ldflags.
var version = "0.1.0-dev"

// commit is the revision the binary was built from, as the Go toolchain
// recorded it (12 hex digits, "-dirty" with local changes); "" when it did
// not (go run, go test, a build outside a git checkout).
var commit = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
})

// buildVersion is the version a process reports (its job row, `weir
// health`, the banner): the version and, when known, the commit, so that
// two builds of one version tell apart during an upgrade.
func buildVersion() string {
	if c := commit(); c != "" {
		return version + "+" + c
	}
	return version
}

// versionInfo is what `weir version -o json` prints.
type versionInfo struct {
	Version            string `json:"version"`
	Commit             string `json:"commit,omitempty"`
	Go                 string `json:"go"`
	ExecutionAPI       string `json:"execution_api"`        // the newest it speaks
	OldestExecutionAPI string `json:"oldest_execution_api"` // the oldest an api-server of it answers
}

func (a *app) versionCmd() *cobra.Command {
	var out output
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print Weir's version (and, with -o json, its commit, Go version and Execution API versions)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := versionInfo{Version: version, Commit: commit(), Go: runtime.Version(),
				ExecutionAPI: execclient.APIVersion, OldestExecutionAPI: execclient.OldestAPIVersion}
			if out.isTable() {
				_, err := cmd.OutOrStdout().Write([]byte(buildVersion() + "\n"))
				return err
			}
			return out.print(cmd.OutOrStdout(), info, []string{"VERSION", "COMMIT", "GO", "EXECUTION_API", "OLDEST_EXECUTION_API"},
				[][]string{{info.Version, info.Commit, info.Go, info.ExecutionAPI, info.OldestExecutionAPI}})
		},
	}
	out.add(cmd)
	return cmd
}
