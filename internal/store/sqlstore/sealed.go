package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
)

// sealedColumn is a column the store keeps sealed by its secrets box, each
// value bound (as additional data) to its row's id so a value copied to
// another row does not decrypt. Connections' URIs and variables' values
// are the two; everything about opening and re-encrypting them is here.
type sealedColumn struct {
	what   string // the row's noun in errors: "connection"
	list   string // every row's id and sealed value
	update string // sets the sealed value ($2) of row $1
	aad    func(id string) string
}

var (
	connectionURIs = sealedColumn{
		what:   "connection",
		list:   `SELECT conn_id, uri FROM connection ORDER BY conn_id`,
		update: `UPDATE connection SET uri = $2 WHERE conn_id = $1`,
		aad:    func(id string) string { return id },
	}
	variableValues = sealedColumn{
		what:   "variable",
		list:   `SELECT key, val FROM variable ORDER BY key`,
		update: `UPDATE variable SET val = $2 WHERE key = $1`,
		aad:    variableAAD,
	}
)

// open returns the plain text of a value read from column c of row id. A
// value stored before encryption existed is returned as it is.
func (s *Store) open(c *sealedColumn, id, text string) (string, error) {
	if !secrets.IsSealed(text) {
		return text, nil
	}
	if s.box == nil {
		return "", fmt.Errorf("%s %s is encrypted and no secrets key is configured (%w)", c.what, id, secrets.ErrUndecryptable)
	}
	plain, err := s.box.Open(text, c.aad(id))
	if err != nil {
		return "", fmt.Errorf("%s %s: %w with this node's [core] secrets_key_file: %v", c.what, id, secrets.ErrUndecryptable, err) //nolint:errorlint // the box's error is its text
	}
	return plain, nil
}

// openListed is open for a row of a listing: a value that does not decrypt
// here becomes "" with the reason returned, so that one stray row cannot
// hide the others or the way to delete it.
func (s *Store) openListed(c *sealedColumn, id string, text *string) (undecryptable string, err error) {
	*text, err = s.open(c, id, *text)
	if errors.Is(err, secrets.ErrUndecryptable) {
		return err.Error(), nil
	}
	return "", err
}

// Resealed counts the rows Reseal rewrote.
type Resealed struct {
	Connections int
	Variables   int
}

// Reseal re-encrypts every connection and variable under the primary key
// of the store's secrets box, in one transaction: values sealed under an
// older key of the ring, or stored in plain text, end up sealed under the
// primary. On any error nothing changes. `weir connections rotate-key`
// calls it.
func (s *Store) Reseal(ctx context.Context) (Resealed, error) {
	if s.box == nil {
		return Resealed{}, fmt.Errorf("re-encrypt secrets: no secrets key is configured: %w", core.ErrInvalid)
	}
	var n Resealed
	err := s.inTx(ctx, func(tx *Store) (err error) {
		if n.Connections, err = tx.reseal(ctx, &connectionURIs); err != nil {
			return err
		}
		n.Variables, err = tx.reseal(ctx, &variableValues)
		return err
	})
	if err != nil {
		return Resealed{}, err
	}
	return n, nil
}

// reseal re-encrypts the values of column c not sealed under the primary
// key and returns how many it rewrote.
func (s *Store) reseal(ctx context.Context, c *sealedColumn) (int, error) {
	type row struct{ id, text string }
	rows, err := s.writer().QueryContext(ctx, c.list)
	if err != nil {
		return 0, s.wrap(err, "read %ss", c.what)
	}
	all, err := collect(rows, func(r *sql.Rows) (row, error) {
		var v row
		return v, r.Scan(&v.id, &v.text)
	})
	if err != nil {
		return 0, s.wrap(err, "read %ss", c.what)
	}
	n := 0
	for _, v := range all {
		if secrets.SealedWith(v.text) == s.box.PrimaryID() {
			continue
		}
		plain, err := s.open(c, v.id, v.text)
		if err != nil {
			return 0, err
		}
		if _, err := s.writer().ExecContext(ctx, c.update, v.id, s.box.Seal(plain, c.aad(v.id))); err != nil {
			return 0, s.wrap(err, "re-encrypt %s %s", c.what, v.id)
		}
		n++
	}
	return n, nil
}
