package config

import (
	"fmt"

	"github.com/weirflow/weir/internal/dagfile"
)

// DagProcessor bounds what parsing one DAG file may cost (docs/dag-files.md#limits),
// so that no file can exhaust the scheduler's memory or time.
type DagProcessor struct {
	MaxFileBytes            int      `toml:"max_file_bytes" comment:"largest DAG file, in bytes; a larger file is an import error and is not read"`
	DagFileProcessorTimeout Duration `toml:"dag_file_processor_timeout" comment:"longest time parsing one DAG file may take; a slower file is an import error"`
}

// defaultDagProcessor is [dag_processor] before any file or environment.
func defaultDagProcessor() DagProcessor {
	return DagProcessor{MaxFileBytes: dagfile.DefaultMaxFileBytes, DagFileProcessorTimeout: Duration(dagfile.DefaultParseTimeout)}
}

// validateDagProcessor checks [dag_processor].
func (c *Config) validateDagProcessor() []error {
	var errs []error
	if c.DagProcessor.MaxFileBytes < 1 {
		errs = append(errs, fmt.Errorf("[dag_processor] max_file_bytes: must be at least 1, got %d", c.DagProcessor.MaxFileBytes))
	}
	if c.DagProcessor.DagFileProcessorTimeout <= 0 {
		errs = append(errs, fmt.Errorf("[dag_processor] dag_file_processor_timeout: must be a positive duration such as \"50s\", got %s",
			c.DagProcessor.DagFileProcessorTimeout))
	}
	return errs
}
