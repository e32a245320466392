package sqlstore

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Connections are stored sealed: the uri column holds the URI encrypted by
// the store's secrets box (AES-256-GCM, bound to the conn_id), so the
// database file, its WAL and its backups never hold a password or extra in
// plain text. This is the one seam: every caller (REST, Execution API,
// CLI, service) reads and writes plain URIs through these methods.

// ConnectionUpsert creates or replaces a connection, sealing its URI.
func (s *Store) ConnectionUpsert(ctx context.Context, c *core.Connection) error {
	if s.box == nil {
		return fmt.Errorf("save connection %s: no secrets key is configured to encrypt it: %w", c.ID, core.ErrInvalid)
	}
	_, err := s.writer().ExecContext(ctx, qConnUpsert, c.ID, s.box.Seal(c.URI, c.ID))
	return s.wrap(err, "save connection %s", c.ID)
}

// ConnectionGet returns a connection (URI unsealed) or ErrNotFound.
func (s *Store) ConnectionGet(ctx context.Context, id string) (*core.Connection, error) {
	var c core.Connection
	if err := s.reader().QueryRowContext(ctx, qConnGet, id).Scan(&c.ID, &c.URI); err != nil {
		return nil, s.wrap(err, "get connection %s", id)
	}
	return &c, s.unseal(&c)
}

// ConnectionList lists a page of connections by id, URIs unsealed; a row
// that does not decrypt here is listed with Undecryptable set, so that one
// stray row cannot hide the others or the way to delete it.
func (s *Store) ConnectionList(ctx context.Context, p *store.ConnectionListParams) ([]core.Connection, error) {
	return listPage(ctx, s, "list connections", qConnList, searched("conn_id", p.Search), &connectionOrder, p.Page,
		func(r scanner) (*core.Connection, error) {
			var c core.Connection
			if err := r.Scan(&c.ID, &c.URI); err != nil {
				return nil, err
			}
			var err error
			c.Undecryptable, err = s.openListed(&connectionURIs, c.ID, &c.URI)
			return &c, err
		})
}

// unseal replaces a stored URI by the plain one.
func (s *Store) unseal(c *core.Connection) (err error) {
	c.URI, err = s.open(&connectionURIs, c.ID, c.URI)
	return err
}
