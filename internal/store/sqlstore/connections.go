package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
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

// ConnectionList lists a page of connections by id, URIs unsealed.
func (s *Store) ConnectionList(ctx context.Context, p *store.ConnectionListParams) ([]core.Connection, error) {
	return listPage(ctx, s, "list connections", qConnList, &builder{}, &connectionOrder, p.Page,
		func(r scanner) (*core.Connection, error) {
			var c core.Connection
			if err := r.Scan(&c.ID, &c.URI); err != nil {
				return nil, err
			}
			return &c, s.unseal(&c)
		})
}

// unseal replaces a stored URI by the plain one. A row stored before
// encryption existed is returned as it is.
func (s *Store) unseal(c *core.Connection) error {
	if !secrets.IsSealed(c.URI) {
		return nil
	}
	if s.box == nil {
		return fmt.Errorf("connection %s is encrypted and no secrets key is configured", c.ID)
	}
	plain, err := s.box.Open(c.URI, c.ID)
	if err != nil {
		return fmt.Errorf("decrypt connection %s: %w", c.ID, err)
	}
	c.URI = plain
	return nil
}

// ConnectionsReseal re-encrypts every connection under the primary key of
// the store's secrets box, in one transaction: rows sealed under an older
// key of the ring, or stored in plain text, end up sealed under the
// primary. It returns how many rows it rewrote; on any error nothing
// changes. `weir connections rotate-key` calls it.
func (s *Store) ConnectionsReseal(ctx context.Context) (int, error) {
	if s.box == nil {
		return 0, fmt.Errorf("re-encrypt connections: no secrets key is configured: %w", core.ErrInvalid)
	}
	n := 0
	err := s.inTx(ctx, func(tx *Store) error {
		rows, err := tx.writer().QueryContext(ctx, fmt.Sprintf(qConnList, "", " ORDER BY conn_id", ""))
		if err != nil {
			return s.wrap(err, "read connections")
		}
		all, err := collect(rows, func(r *sql.Rows) (core.Connection, error) {
			var c core.Connection
			return c, r.Scan(&c.ID, &c.URI)
		})
		if err != nil {
			return s.wrap(err, "read connections")
		}
		for i := range all {
			c := &all[i]
			if secrets.SealedWith(c.URI) == s.box.PrimaryID() {
				continue
			}
			if err := tx.unseal(c); err != nil {
				return err
			}
			if err := tx.ConnectionUpsert(ctx, c); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
