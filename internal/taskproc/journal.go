package taskproc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// encodeLines encodes entries as journal lines, each starting with a line
// break (see Ledger).
func encodeLines(entries ...entry) ([]byte, error) {
	var b []byte
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, '\n'), line...), '\n')
	}
	return b, nil
}

// replay applies the lines of the journal at path to h, skipping lines
// that do not parse (cut short by a killed writer).
func replay(path string, h *holdings) error {
	b, err := os.ReadFile(path) //nolint:gosec // G304: a journal of the worker's own run folder
	if err != nil {
		if os.IsNotExist(err) {
			return nil // removed by a sibling meanwhile
		}
		return fmt.Errorf("read task journal: %w", err)
	}
	for line := range bytes.Lines(b) {
		var e entry
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &e) != nil {
			continue
		}
		h.apply(e)
	}
	return nil
}
