package apiclient

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/weirflow/weir/internal/core"
)

// Error is an answer of the API with a status of 300 or more. Its message
// is the problem's detail in the API's words (naming the id or field at
// fault); for 401 it adds how to log in again. It wraps the core sentinel
// of the status, so errors.Is(err, core.ErrNotFound) works as it does on
// the local transport.
type Error struct {
	Status  int
	Message string
	kind    error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the core sentinel of the status (nil for a status without
// one).
func (e *Error) Unwrap() error { return e.kind }

// problem is the part of an RFC 9457 problem+json body the client shows.
type problem struct {
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Errors []struct {
		Message  string `json:"message"`
		Location string `json:"location"`
	} `json:"errors"`
}

// statusError builds the *Error of an answer with status and body b.
func (c *Client) statusError(status int, b []byte) error {
	var p problem
	msg := ""
	if json.Unmarshal(b, &p) == nil {
		msg = p.Detail
		if msg == "" {
			msg = p.Title
		}
		var parts []string
		for _, e := range p.Errors {
			part := e.Message
			if e.Location != "" {
				part = strings.TrimPrefix(e.Location, "body.") + ": " + part
			}
			parts = append(parts, part)
		}
		if len(parts) > 0 {
			msg = strings.TrimSuffix(msg, ".") + ": " + strings.Join(parts, "; ")
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(b))
		if len(msg) > 200 || msg == "" {
			msg = http.StatusText(status)
		}
	}
	e := &Error{Status: status, Message: msg, kind: kindOf(status)}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		msg = strings.TrimSuffix(msg, ": "+e.kind.Error()) // said in other words below
	}
	switch status {
	case http.StatusUnauthorized:
		e.Message = fmt.Sprintf("the Weir API at %s refused the credentials (%s): log in again with `weir login --api-url %s`",
			c.base, msg, c.base)
	case http.StatusForbidden:
		e.Message = "permission denied: " + msg
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		e.Message = fmt.Sprintf("the Weir API at %s is unavailable (%d %s): %s", c.base, status, http.StatusText(status), msg)
	}
	return e
}

// kindOf is the core sentinel the API maps to status (api.StatusOf in
// reverse).
func kindOf(status int) error {
	switch status {
	case http.StatusNotFound:
		return core.ErrNotFound
	case http.StatusConflict:
		return core.ErrConflict
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return core.ErrInvalid
	case http.StatusRequestEntityTooLarge:
		return core.ErrTooLarge
	case http.StatusForbidden:
		return core.ErrForbidden
	case http.StatusUnauthorized:
		return core.ErrUnauthorized
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return core.ErrUnavailable
	}
	return nil
}

// unreachableError is a request no api-server answered: a core.ErrUnavailable
// (the caller may retry) whose text says only what happened, not that a
// database is down.
type unreachableError string

func (e unreachableError) Error() string { return string(e) }
func (e unreachableError) Unwrap() error { return core.ErrUnavailable }
