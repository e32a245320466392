// Command weir is the Weir workflow orchestrator: one binary for every role
// (standalone, api-server, scheduler, worker) and the admin and in-task CLI.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/weirflow/weir/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Options{})
	stop()
	os.Exit(code)
}
