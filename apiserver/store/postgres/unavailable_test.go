package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestUnavailable: which of PostgreSQL's errors mean "not reachable now". The errors of a
// real stop and start are in apiserver's TestStoreOutageAnswers503; these are the SQLSTATEs
// a test cannot easily provoke, and the ones that must stay internal errors.
func TestUnavailable(t *testing.T) {
	pg := func(code string) error {
		return fmt.Errorf("query: %w", &pgconn.PgError{Severity: "FATAL", Code: code})
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{pg("57P01"), true}, // admin_shutdown
		{pg("57P02"), true}, // crash_shutdown
		{pg("57P03"), true}, // cannot_connect_now
		{pg("08006"), true}, // connection_failure
		{pg("08001"), true}, // unable to establish
		{pg("53300"), true}, // too_many_connections
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{driver.ErrBadConn, true},
		{pg("23505"), false}, // unique_violation
		{pg("40001"), false}, // serialization failure: run again, not an outage
		{pg("28P01"), false}, // wrong password: a configuration error
		{pg("3D000"), false}, // no such database
		{pg("42601"), false}, // syntax error
		{context.Canceled, false},
		{errors.New("decoding a document"), false},
	} {
		if got := unavailable(tc.err); got != tc.want {
			t.Errorf("unavailable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
