package postgres

import (
	"database/sql/driver"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// batchRows are the rows of a query sent in a batch with what waited
// (pipelineConn.sendQuery), as database/sql reads them: each column gives
// the Go value pgx's own driver gives for its type (its Rows are not made
// outside it), and closing them closes the batch.
type batchRows struct {
	rows   pgx.Rows
	close  func() error // the batch's
	types  *pgtype.Map
	more   bool // the first row, read ahead, is there
	read   bool // the first row was returned
	values []valueFunc
}

type valueFunc func(src []byte) (driver.Value, error)

func (r *batchRows) Columns() []string {
	fields := r.rows.FieldDescriptions()
	names := make([]string, len(fields))
	for i, fd := range fields {
		names[i] = fd.Name
	}
	return names
}

func (r *batchRows) Close() error {
	r.rows.Close()
	err := r.rows.Err()
	if cerr := r.close(); err == nil {
		err = cerr
	}
	return err
}

func (r *batchRows) Next(dest []driver.Value) error {
	more := r.more
	if r.read {
		more = r.rows.Next()
	}
	r.read = true
	if !more {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	if r.values == nil {
		for _, fd := range r.rows.FieldDescriptions() {
			r.values = append(r.values, columnValue(r.types, fd))
		}
	}
	for i, raw := range r.rows.RawValues() {
		if raw == nil {
			dest[i] = nil
			continue
		}
		v, err := r.values[i](raw)
		if err != nil {
			return fmt.Errorf("convert column %d: %w", i, err)
		}
		dest[i] = v
	}
	return nil
}

// columnValue converts a column's raw values as pgx's database/sql driver
// does (stdlib.Rows.Next).
func columnValue(m *pgtype.Map, fd pgconn.FieldDescription) valueFunc {
	switch fd.DataTypeOID {
	case pgtype.BoolOID:
		return scanned(m, fd, func(d bool) (driver.Value, error) { return d, nil })
	case pgtype.ByteaOID, pgtype.JSONOID, pgtype.JSONBOID, pgtype.XMLOID:
		return scanned(m, fd, func(d []byte) (driver.Value, error) { return d, nil })
	case pgtype.CIDOID, pgtype.OIDOID, pgtype.XIDOID:
		return scanned(m, fd, func(d pgtype.Uint32) (driver.Value, error) { return d.Value() })
	case pgtype.DateOID:
		return scanned(m, fd, func(d pgtype.Date) (driver.Value, error) { return d.Value() })
	case pgtype.Float4OID:
		return scanned(m, fd, func(d float32) (driver.Value, error) { return float64(d), nil })
	case pgtype.Float8OID:
		return scanned(m, fd, func(d float64) (driver.Value, error) { return d, nil })
	case pgtype.Int2OID:
		return scanned(m, fd, func(d int16) (driver.Value, error) { return int64(d), nil })
	case pgtype.Int4OID:
		return scanned(m, fd, func(d int32) (driver.Value, error) { return int64(d), nil })
	case pgtype.Int8OID:
		return scanned(m, fd, func(d int64) (driver.Value, error) { return d, nil })
	case pgtype.TimestampOID:
		return scanned(m, fd, func(d pgtype.Timestamp) (driver.Value, error) { return d.Value() })
	case pgtype.TimestamptzOID:
		return scanned(m, fd, func(d pgtype.Timestamptz) (driver.Value, error) { return d.Value() })
	}
	// pgx's driver asks for every other type in text and gives the text;
	// a batch cannot ask, so a type pgx reads in binary (uuid, numeric,
	// interval, arrays) is decoded and written as text by its codec.
	if t, ok := m.TypeForOID(fd.DataTypeOID); ok && fd.Format == pgtype.BinaryFormatCode {
		return func(src []byte) (driver.Value, error) {
			v, err := t.Codec.DecodeValue(m, fd.DataTypeOID, fd.Format, src)
			if err != nil {
				return nil, err
			}
			text, err := m.Encode(fd.DataTypeOID, pgtype.TextFormatCode, v, nil)
			return string(text), err
		}
	}
	return scanned(m, fd, func(d string) (driver.Value, error) { return d, nil })
}

// scanned decodes a column into a T with pgx's plan for its type and
// format, and converts that to a driver.Value.
func scanned[T any](m *pgtype.Map, fd pgconn.FieldDescription, value func(T) (driver.Value, error)) valueFunc {
	var d T
	plan := m.PlanScan(fd.DataTypeOID, fd.Format, &d)
	return func(src []byte) (driver.Value, error) {
		if err := plan.Scan(src, &d); err != nil {
			return nil, err
		}
		return value(d)
	}
}
