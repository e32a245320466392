// Package builtin lists the trigger types every Weir binary has.
package builtin

import (
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/command"
	"github.com/weirflow/weir/internal/trigger/dirwatch"
	"github.com/weirflow/weir/internal/trigger/externaltask"
	"github.com/weirflow/weir/internal/trigger/filetrigger"
	"github.com/weirflow/weir/internal/trigger/httppaginated"
	"github.com/weirflow/weir/internal/trigger/httptrigger"
	"github.com/weirflow/weir/internal/trigger/httpwatch"
	"github.com/weirflow/weir/internal/trigger/s3trigger"
	"github.com/weirflow/weir/internal/trigger/s3watch"
	"github.com/weirflow/weir/internal/trigger/sqlcursor"
	"github.com/weirflow/weir/internal/trigger/sqltrigger"
	"github.com/weirflow/weir/internal/trigger/sqlwatch"
	"github.com/weirflow/weir/internal/trigger/timer"
)

// Types returns the built-in trigger types.
func Types() []trigger.Type {
	return []trigger.Type{
		timer.DateTime, timer.TimeDelta,
		filetrigger.Type, httptrigger.Type, sqltrigger.Type, s3trigger.Type, externaltask.Type,
		command.Type, httppaginated.Type, sqlcursor.Type,
		dirwatch.Type, s3watch.Type,
		sqlwatch.Type, httpwatch.Type,
	}
}

// Registry returns a new registry holding the built-in types (a program
// adds its own with Register).
func Registry() *trigger.Registry { return trigger.NewRegistry(Types()...) }
