package dagprocessor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/store"
)

// syncWarnings records d's warnings ws (dagfile.Warnings) in tx, or clears
// them once the definition is fixed. Warnings never stop a DAG loading;
// they show in GET /api/v2/dagWarnings and `weir dags list-warnings`.
func (p *Processor) syncWarnings(ctx context.Context, tx store.Store, d *core.DAG, ws []string, now time.Time) error {
	if len(ws) == 0 {
		if err := tx.DagWarningDelete(ctx, d.DagID, dagfile.WarningUnquotedTriggerData); err != nil {
			return fmt.Errorf("clear warnings of dag %s: %w", d.DagID, err)
		}
		return nil
	}
	err := tx.DagWarningSet(ctx, &core.DagWarning{DagID: d.DagID, WarningType: dagfile.WarningUnquotedTriggerData,
		Message: strings.Join(ws, "\n"), Timestamp: now})
	if err != nil {
		return fmt.Errorf("record warnings of dag %s: %w", d.DagID, err)
	}
	return nil
}
