package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store"
)

// ConnectionResponse describes a connection. Passwords are never returned:
// the URI's password (and any secret-looking query parameter) is redacted.
type ConnectionResponse struct {
	ConnectionID  string  `json:"connection_id"`
	ConnType      string  `json:"conn_type"`
	Description   *string `json:"description" doc:"always null: Weir keeps a connection as its URI"`
	Host          *string `json:"host"`
	Login         *string `json:"login"`
	Schema        *string `json:"schema"`
	Port          *int    `json:"port"`
	Password      *string `json:"password" doc:"*** when the connection has one, null otherwise: never the password"`
	Extra         *string `json:"extra" doc:"the URI's query parameters as a JSON object, secret ones redacted; null for none"`
	URI           string  `json:"uri" doc:"the connection URI with its password redacted"`
	Undecryptable string  `json:"undecryptable,omitempty" doc:"why the stored URI cannot be decrypted by this api-server (a key its key file lacks, or tampering); uri then says so"`
}

// ConnectionCollection is a page of connections.
type ConnectionCollection struct {
	Connections  []ConnectionResponse `json:"connections"`
	TotalEntries int                  `json:"total_entries"`
}

type connectionIDInput struct {
	ID string `path:"connection_id" doc:"connection id"`
}

type postConnectionInput struct {
	Body struct {
		ConnectionID string          `json:"connection_id" doc:"letters, digits, '_', '-' and '.'"`
		URI          string          `json:"uri,omitempty" doc:"scheme://[login[:password]@]host[:port][/schema][?extra]; or give the fields below"`
		ConnType     string          `json:"conn_type,omitempty"`
		Host         string          `json:"host,omitempty"`
		Login        string          `json:"login,omitempty"`
		Password     string          `json:"password,omitempty"`
		Schema       string          `json:"schema,omitempty"`
		Port         int             `json:"port,omitempty" minimum:"0" maximum:"65535"`
		Extra        ConnectionExtra `json:"extra,omitempty" doc:"a JSON object, or a string holding one (as Airflow's clients send it); its values, strings, numbers or booleans, are added to the URI as query parameters"`
	}
}

// ConnectionExtra is a connection's extra as a body gives it: a JSON
// object, or a string holding one (Airflow's extra is a string).
type ConnectionExtra map[string]any

// UnmarshalJSON reads an object, or a string holding one ("" for none).
func (e *ConnectionExtra) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return nil
		}
		b = []byte(s)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("extra must be a JSON object, or a string holding one: %w", err)
	}
	*e = m
	return nil
}

// Schema documents extra as an object or a string.
func (ConnectionExtra) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Description: "a JSON object, or a string holding one"}
}

type listConnectionsInput struct {
	Page
	Pattern string `query:"connection_id_pattern" doc:"only connections whose id contains this, ignoring case (% and _ are taken literally)"`
}

type patchConnectionInput struct {
	ID         string   `path:"connection_id" doc:"connection id"`
	UpdateMask []string `query:"update_mask" doc:"only these fields (conn_type, host, login, password, schema, port, extra), as Airflow's update_mask; none: every field the body gives"`
	Body       connectionPatch
}

// connectionPatch is the body of PATCH /connections/{connection_id}:
// Airflow's ConnectionBody, each field given or not (null included).
type connectionPatch struct {
	ConnectionID field[string]          `json:"connection_id,omitempty" doc:"the path's connection_id, when given"`
	URI          field[string]          `json:"uri,omitempty" doc:"Weir's: replaces the whole connection; no other field with it (but the uri a read showed, ignored)"`
	ConnType     field[string]          `json:"conn_type,omitempty"`
	Description  field[string]          `json:"description,omitempty" doc:"Weir keeps no description: null or empty only"`
	TeamName     field[string]          `json:"team_name,omitempty" doc:"Airflow 3.1's; Weir has no teams: null or empty only"`
	Host         field[string]          `json:"host,omitempty"`
	Login        field[string]          `json:"login,omitempty"`
	Password     field[string]          `json:"password,omitempty" doc:"*** (as a read shows it) keeps the current password"`
	Schema       field[string]          `json:"schema,omitempty"`
	Port         field[int]             `json:"port,omitempty"`
	Extra        field[ConnectionExtra] `json:"extra,omitempty" doc:"a JSON object, or a string holding one; a value *** keeps the current one of that key"`
}

// redacted replaces a secret in a connection URI.
const redacted = "***"

func (s *server) registerConnections() {
	tags := []string{"Connection"}
	base := Prefix + "/connections"
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "get_connections", Method: http.MethodGet, Path: base, Tags: tags, Summary: "List connections",
		Description: listDoc("Lists connections, secrets redacted.", store.ConnectionOrder), Errors: []int{http.StatusBadRequest},
	}, s.listConnections)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "get_connection", Method: http.MethodGet, Path: base + "/{connection_id}", Tags: tags,
		Summary: "Get a connection", Errors: []int{http.StatusNotFound},
	}, s.getConnection)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "post_connection", Method: http.MethodPost, Path: base, Tags: tags, Summary: "Create a connection",
		DefaultStatus: http.StatusCreated, Errors: []int{http.StatusBadRequest, http.StatusConflict},
	}, s.postConnection)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "patch_connection", Method: http.MethodPatch, Path: base + "/{connection_id}", Tags: tags,
		Summary: "Update a connection",
		Description: "As Airflow 3.1: the fields the body gives (with update_mask, only those it names) replace the connection's, " +
			"each in its place in the URI. A password of *** (or an extra value ***, as a read shows secrets) keeps the current one. Audited.",
		Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.patchConnection)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "bulk_connections", Method: http.MethodPatch, Path: base, Tags: tags,
		Summary: "Create, update and delete connections", Description: bulkDoc("connections") +
			" An update applies the fields it gives as PATCH of one connection without update_mask does.",
		Errors: []int{http.StatusBadRequest},
	}, func(ctx context.Context, in *struct{ Body BulkBody }) (*struct{ Body BulkResponse }, error) {
		return bulk(ctx, s, s.connectionBulk(), &in.Body)
	})
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "delete_connection", Method: http.MethodDelete, Path: base + "/{connection_id}", Tags: tags,
		Summary: "Delete a connection", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
	}, s.deleteConnection)
}

func (s *server) listConnections(ctx context.Context, in *listConnectionsInput) (*struct{ Body ConnectionCollection }, error) {
	conns, total, err := listOf(ctx, s, &store.ConnectionListParams{Search: in.Pattern, Page: in.store()}, s.st.ConnectionList, s.st.ConnectionCount)
	if err != nil {
		return nil, err
	}
	out := make([]ConnectionResponse, len(conns))
	for i, c := range conns {
		out[i] = connectionResponse(c)
	}
	return &struct{ Body ConnectionCollection }{ConnectionCollection{Connections: out, TotalEntries: total}}, nil
}

func (s *server) getConnection(ctx context.Context, in *connectionIDInput) (*struct{ Body ConnectionResponse }, error) {
	c, err := s.st.ConnectionGet(ctx, in.ID)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("connection_id %q: %w", in.ID, err))
	}
	return &struct{ Body ConnectionResponse }{connectionResponse(*c)}, nil
}

func (s *server) postConnection(ctx context.Context, in *postConnectionInput) (*struct{ Body ConnectionResponse }, error) {
	b := &in.Body
	uri := b.URI
	if uri == "" {
		if b.ConnType == "" {
			return nil, invalid("give either uri or conn_type (with host, login, password, schema, port, extra)")
		}
		given := func(v string) field[string] {
			if v == "" {
				return field[string]{}
			}
			return field[string]{Set: true, Value: &v}
		}
		p := connectionPatch{ConnType: given(b.ConnType), Host: given(b.Host), Login: given(b.Login), Password: given(b.Password),
			Schema: given(b.Schema)}
		if b.Port != 0 {
			p.Port = field[int]{Set: true, Value: &b.Port}
		}
		if len(b.Extra) > 0 {
			p.Extra = field[ConnectionExtra]{Set: true, Value: &b.Extra}
		}
		var err error
		if uri, err = patchedURI("", "", &p, nil); err != nil {
			return nil, err
		}
	}
	c := core.Connection{ID: b.ConnectionID, URI: uri}
	if err := s.svc.SaveConnection(ctx, actor(ctx), c, false); err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body ConnectionResponse }{connectionResponse(c)}, nil
}

func (s *server) patchConnection(ctx context.Context, in *patchConnectionInput) (*struct{ Body ConnectionResponse }, error) {
	b := &in.Body
	if err := b.check(in.ID); err != nil {
		return nil, err
	}
	c, err := s.svc.UpdateConnection(ctx, actor(ctx), in.ID, func(uri string) (string, error) {
		return patchedURI(uri, uri, b, in.UpdateMask)
	})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body ConnectionResponse }{connectionResponse(c)}, nil
}

// check refuses what a body gives that Weir cannot keep: a connection_id
// other than id, a description, a team.
func (b *connectionPatch) check(id string) error {
	switch {
	case b.ConnectionID.Value != nil && *b.ConnectionID.Value != id:
		return invalid(fmt.Sprintf("connection_id %q in the body is not the path's %q", *b.ConnectionID.Value, id))
	case b.Description.or("") != "":
		return invalid("description: Weir keeps a connection as its URI, without a description")
	case b.TeamName.or("") != "":
		return invalid("team_name: Weir has no teams")
	}
	return nil
}

// patchedFields are the fields an update_mask may name.
var patchedFields = []string{"conn_type", "host", "login", "password", "schema", "port", "extra"}

// patchedURI is connection URI cur with p's fields applied, as Airflow 3
// applies a PATCH: the fields the body gives (with mask, only those it
// names) replace the connection's, each in its place in the URI (a query
// value, a fragment, an escaped path the body does not touch stay as they
// are). A secret given as *** (password, an extra value, or in uri) is
// the one secretsFrom, the connection's URI, holds; one it lacks is an
// error naming it.
func patchedURI(cur, secretsFrom string, p *connectionPatch, mask []string) (string, error) {
	for _, f := range mask {
		if !slices.Contains(patchedFields, f) {
			return "", invalid(fmt.Sprintf("update_mask names %q; a connection's fields to update are %s", f, strings.Join(patchedFields, ", ")))
		}
	}
	fields := p.ConnType.Set || p.Host.Set || p.Login.Set || p.Password.Set || p.Schema.Set || p.Port.Set || p.Extra.Set || len(mask) > 0
	// A uri that is null, or the one a read showed sent back with the
	// fields, says nothing the fields do not.
	if uri := p.URI.Value; uri != nil && (!fields || *uri != RedactedURI(cur)) {
		if fields {
			return "", invalid("uri replaces the whole connection: give it alone, or give the fields (conn_type, host, ...) without it")
		}
		return keptSecrets(*uri, secretsFrom)
	}
	u, err := url.Parse(cur)
	if err != nil {
		return "", fmt.Errorf("the stored URI does not parse; give the whole connection as uri: %w", core.ErrInvalid)
	}
	old := secretsOf(secretsFrom)
	apply := func(name string, given bool) bool { return given && (len(mask) == 0 || slices.Contains(mask, name)) }
	if apply("conn_type", p.ConnType.Set) {
		u.Scheme = p.ConnType.or("")
	}
	host, port := u.Hostname(), u.Port()
	if apply("host", p.Host.Set) {
		host = p.Host.or("")
	}
	if apply("port", p.Port.Set) {
		switch n := p.Port.or(0); {
		case n < 0 || n > 65535:
			return "", invalid(fmt.Sprintf("port %d: a port is 0 to 65535", n))
		case n == 0:
			port = ""
		default:
			port = strconv.Itoa(n)
		}
	}
	switch {
	case port != "":
		u.Host = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"): // an IPv6 address, bracketed as with a port
		u.Host = "[" + host + "]"
	default:
		u.Host = host
	}
	login := u.User.Username()
	password, hasPassword := u.User.Password()
	if apply("login", p.Login.Set) {
		login = p.Login.or("")
	}
	if apply("password", p.Password.Set) {
		if password, hasPassword = p.Password.or(""), p.Password.or("") != ""; password == redacted {
			if password, err = old.password("password"); err != nil {
				return "", err
			}
		}
	}
	switch {
	case hasPassword:
		u.User = url.UserPassword(login, password)
	case login != "":
		u.User = url.User(login)
	default:
		u.User = nil
	}
	if apply("schema", p.Schema.Set) {
		u.Path, u.RawPath = "", ""
		if schema := p.Schema.or(""); schema != "" {
			u.Path = "/" + schema
		}
	}
	if apply("extra", p.Extra.Set) {
		q := url.Values{}
		for k, v := range p.Extra.or(nil) {
			switch v.(type) {
			case nil, map[string]any, []any:
				return "", invalid(fmt.Sprintf("extra %q is %s: Weir keeps a connection as one URI whose extras are query parameters, "+
					"so each must be a string, a number or a boolean", k, map[bool]string{true: "null", false: "a nested object or list"}[v == nil]))
			}
			if v == redacted {
				if v, err = old.param("extra", k); err != nil {
					return "", err
				}
			}
			q.Set(k, fmt.Sprint(v))
		}
		u.RawQuery = q.Encode()
	}
	if u.Scheme == "" {
		return "", invalid("conn_type: a connection needs a type (its URI's scheme)")
	}
	// scheme://, even without a host: "scheme:?query" is no URL to the
	// redaction of secrets (nor to most clients).
	s := u.String()
	if !strings.HasPrefix(s, u.Scheme+"://") {
		s = u.Scheme + "://" + strings.TrimPrefix(s, u.Scheme+":")
	}
	return s, nil
}

// keptSecrets is connection URI uri with each secret it shows as *** (its
// password, a query value) taken from cur, the connection's URI: a uri a
// read showed, sent back with other changes, keeps the secrets. A *** the
// connection has no value for is an error naming it.
func keptSecrets(uri, cur string) (string, error) {
	if !strings.Contains(uri, redacted) && !strings.Contains(uri, url.QueryEscape(redacted)) {
		return uri, nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return uri, nil // the service says it is no URI
	}
	old := secretsOf(cur)
	if pw, has := u.User.Password(); has && pw == redacted {
		was, err := old.password("uri: its password")
		if err != nil {
			return "", err
		}
		u.User = url.UserPassword(u.User.Username(), was)
	}
	q := u.Query()
	for k, vs := range q {
		for i, v := range vs {
			if v == redacted {
				if vs[i], err = old.param("uri:", k); err != nil {
					return "", err
				}
			}
		}
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// connSecrets are the secrets of a connection's URI that a *** keeps.
type connSecrets struct{ u *url.URL }

// secretsOf reads the secrets of connection URI uri ("" or one that does
// not parse: none).
func secretsOf(uri string) connSecrets {
	u, _ := url.Parse(uri)
	if u == nil {
		u = &url.URL{}
	}
	return connSecrets{u}
}

// password is the connection's password, for a *** given as what; none
// is an error saying so.
func (c connSecrets) password(what string) (string, error) {
	pw, ok := c.u.User.Password()
	if !ok {
		return "", invalid(what + " is ***, which keeps the connection's password, but it has none")
	}
	return pw, nil
}

// param is the value of the connection's query parameter k, for a ***
// given in what; none is an error naming it.
func (c connSecrets) param(what, k string) (string, error) {
	if !c.u.Query().Has(k) {
		return "", invalid(fmt.Sprintf("%s %q is ***, which keeps a secret the connection holds, but it has no %q", what, k, k))
	}
	return c.u.Query().Get(k), nil
}

// connectionBulk is a bulk PATCH's view of connections: a create as
// POST's body, an update as PATCH's.
func (s *server) connectionBulk() bulkResource[connectionPatch] {
	return bulkResource[connectionPatch]{
		plural: "connections",
		key:    func(b connectionPatch) string { return b.ConnectionID.or("") },
		exists: func(ctx context.Context, id string) (bool, error) {
			_, err := s.st.ConnectionGet(ctx, id)
			return found(err)
		},
		create: func(ctx context.Context, b connectionPatch, overwrite bool) error {
			id := b.ConnectionID.or("")
			if err := b.check(id); err != nil {
				return err
			}
			var was string // an overwritten connection's secrets, for a *** that keeps them
			if overwrite {
				if cur, err := s.st.ConnectionGet(ctx, id); err == nil {
					was = cur.URI
				}
			}
			uri, err := patchedURI("", was, &b, nil)
			if err != nil {
				return err
			}
			return s.svc.SaveConnection(ctx, actor(ctx), core.Connection{ID: id, URI: uri}, overwrite)
		},
		update: func(ctx context.Context, b connectionPatch) error {
			id := b.ConnectionID.or("")
			if err := b.check(id); err != nil {
				return err
			}
			_, err := s.svc.UpdateConnection(ctx, actor(ctx), id, func(uri string) (string, error) {
				return patchedURI(uri, uri, &b, nil)
			})
			return err
		},
		remove: func(ctx context.Context, id string) error { return s.svc.DeleteConnection(ctx, actor(ctx), id) },
	}
}

func (s *server) deleteConnection(ctx context.Context, in *connectionIDInput) (*struct{}, error) {
	if err := s.svc.DeleteConnection(ctx, actor(ctx), in.ID); err != nil {
		return nil, s.problem(ctx, err)
	}
	return nil, nil
}

// connectionResponse splits a stored URI into Airflow's fields and redacts
// its secrets. A URI that does not parse is not shown at all.
func connectionResponse(c core.Connection) ConnectionResponse {
	if c.Undecryptable != "" {
		return ConnectionResponse{ConnectionID: c.ID, URI: ShownURI(c), Undecryptable: c.Undecryptable}
	}
	r := ConnectionResponse{ConnectionID: c.ID, URI: redacted}
	u, err := url.Parse(c.URI)
	if err != nil {
		return r
	}
	r.ConnType = u.Scheme
	r.Host, r.Schema = nonEmpty(u.Hostname()), nonEmpty(strings.TrimPrefix(u.Path, "/"))
	if port, err := strconv.Atoi(u.Port()); err == nil {
		r.Port = &port
	}
	if u.User != nil {
		r.Login = nonEmpty(u.User.Username())
		if _, has := u.User.Password(); has {
			r.Password = nonEmpty(redacted)
		}
	}
	r.URI = secrets.RedactURI(c.URI)
	if shown, err := url.Parse(r.URI); err == nil && len(shown.Query()) > 0 { // the query as redacted for the URI
		extra := make(map[string]string, len(shown.Query()))
		for k := range shown.Query() {
			extra[k] = shown.Query().Get(k)
		}
		b, _ := json.Marshal(extra) // strings always encode
		r.Extra = nonEmpty(string(b))
	}
	return r
}

// nonEmpty is s, or nil when it is empty (a field Airflow shows as null).
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ShownURI is a listed connection's URI as every surface shows it: its
// secrets masked (RedactedURI), or, for a row that does not decrypt here,
// why.
func ShownURI(c core.Connection) string {
	if c.Undecryptable != "" {
		return undecryptableShown(c.Undecryptable, "add")
	}
	return RedactedURI(c.URI)
}

// undecryptableShown stands for a stored secret that does not decrypt
// here, saying why and how to mend it (redo: "add" for a connection,
// "set" for a variable).
func undecryptableShown(reason, redo string) string {
	return "(cannot decrypt here: " + reason + "; delete it, or " + redo + " it again, with the key that encrypted it or without)"
}

// RedactedURI is a connection URI as the API shows it (secrets.RedactURI;
// one that does not parse is not shown at all): the CLI's local transport
// prints the same.
func RedactedURI(uri string) string { return connectionResponse(core.Connection{URI: uri}).URI }
