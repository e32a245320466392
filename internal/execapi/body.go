package execapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statevalue"
)

// The Execution API reads every JSON request body here, so that each route
// refuses the same things with the same message (400): a body that is not
// UTF-8, a field the route does not know, and anything after the JSON value
// but white space (as the REST API does).

// readJSON decodes a request body of at most limit bytes into v.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := readBody(w, r, limit, func() error {
		return fmt.Errorf("request body exceeds %d bytes: %w", limit, core.ErrTooLarge)
	})
	if err != nil {
		return err
	}
	return decodeBody(body, v)
}

// readBody reads a request body of at most limit bytes (tooLarge is the
// error beyond) and checks that it is UTF-8.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, tooLarge func() error) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge()
		}
		return nil, fmt.Errorf("read request body: %w", err)
	}
	if err := statevalue.CheckUTF8("request body", body); err != nil {
		return nil, err
	}
	return body, nil
}

// decodeBody decodes the one JSON value of body into v, refusing unknown
// fields and trailing data.
func decodeBody(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON body: %w: %w", err, core.ErrInvalid)
	}
	if off := dec.InputOffset(); len(bytes.TrimSpace(body[off:])) > 0 {
		return fmt.Errorf("invalid JSON body: unexpected data after the JSON value at offset %d (send exactly one value): %w",
			off, core.ErrInvalid)
	}
	return nil
}
