package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// The outbox (store.Outbox) in two tables: events, and deliveries that point at them. Both
// are ordered by seq, which the database assigns; times are Unix milliseconds.

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func (t *tx) AddEvent(ctx context.Context, e *store.Event, deliveries []store.NewDelivery) error {
	event := func() error {
		return t.tx.QueryRowContext(ctx, t.d.rebind(`INSERT INTO events (id, account_id, type, created_at, payload)
			VALUES (?, ?, ?, ?, ?) RETURNING seq`), e.ID, e.AccountID, e.Type, ms(e.Time), e.Payload).Scan(&e.Seq)
	}
	if len(deliveries) == 0 {
		return event() // one statement: all or nothing without a savepoint
	}
	return t.atomic(ctx, func() error {
		if err := event(); err != nil {
			return err
		}
		for _, d := range deliveries {
			_, err := t.exec(ctx, `INSERT INTO deliveries (id, event_id, destination_id, account_id, state,
				next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				d.ID, e.ID, d.DestinationID, e.AccountID, store.DeliveryPending, ms(e.Time), ms(e.Time), ms(e.Time))
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// Claim implements store.Outbox. The head of a destination is its oldest pending delivery;
// only a due head that no running lease holds opens the destination, and the rows behind it
// are taken with it. On PostgreSQL the head is locked with SKIP LOCKED, so replicas claiming
// at the same moment take different destinations instead of waiting for each other.
func (s *Store) Claim(ctx context.Context, holder string, now time.Time, lease time.Duration, limit int) ([]*store.Delivery, error) {
	head := func(t *tx, lock string) (destination string, err error) {
		err = t.tx.QueryRowContext(ctx, t.d.rebind(`SELECT d.destination_id FROM deliveries d
			WHERE d.state = ? AND d.next_attempt_at <= ? AND d.lease_until <= ?
			AND NOT EXISTS (SELECT 1 FROM deliveries p WHERE p.destination_id = d.destination_id AND p.state = ? AND p.seq < d.seq)
			ORDER BY d.seq LIMIT 1`+lock),
			store.DeliveryPending, ms(now), ms(now), store.DeliveryPending).Scan(&destination)
		if err == sql.ErrNoRows {
			return "", nil
		}
		return destination, err
	}
	// Idle workers poll: look on the read pool first, so that finding nothing takes no
	// write transaction.
	due := false
	err := s.run(ctx, s.read, &s.dialect.ReadOptions, func(st store.Tx) error {
		destination, err := head(st.(*tx), "")
		due = destination != ""
		return err
	})
	if err != nil || !due {
		return nil, err
	}
	var claimed []*store.Delivery
	err = s.rawWrite(ctx, func(t *tx) error {
		claimed = nil
		destination, err := head(t, t.d.SkipLocked)
		if err != nil || destination == "" {
			return err
		}
		rows, err := t.deliveries(ctx, true, `
			WHERE d.destination_id = ? AND d.state = ? AND d.lease_until <= ? ORDER BY d.seq LIMIT ?`+t.d.ForUpdate,
			destination, store.DeliveryPending, ms(now), limit)
		if err != nil {
			return err
		}
		until := now.Add(lease)
		for _, d := range rows {
			if _, err := t.exec(ctx, "UPDATE deliveries SET lease_holder = ?, lease_until = ?, updated_at = ? WHERE seq = ?",
				holder, ms(until), ms(now), d.Seq); err != nil {
				return err
			}
		}
		claimed = rows
		return nil
	})
	return claimed, err
}

// Finish implements store.Outbox.
func (s *Store) Finish(ctx context.Context, holder string, now time.Time, outcomes []store.Outcome) error {
	return s.rawWrite(ctx, func(t *tx) error {
		for _, o := range outcomes {
			next := int64(0)
			if o.State == store.DeliveryPending {
				next = ms(o.NextAttempt)
			}
			if _, err := t.exec(ctx, `UPDATE deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?,
				last_error = ?, lease_holder = '', lease_until = 0, updated_at = ? WHERE seq = ? AND lease_holder = ?`,
				o.State, next, o.Error, ms(now), o.Seq, holder); err != nil {
				return err
			}
		}
		return nil
	})
}

// Events implements store.Outbox.
func (s *Store) Events(ctx context.Context, q store.OutboxQuery) ([]*store.Event, error) {
	var out []*store.Event
	err := s.run(ctx, s.read, &s.dialect.ReadOptions, func(st store.Tx) error {
		t := st.(*tx)
		where, args := outboxWhere("events", "", q)
		rows, err := t.tx.QueryContext(ctx, t.d.rebind(`SELECT seq, id, account_id, type, created_at, payload FROM events`+where), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = nil
		for rows.Next() {
			e := new(store.Event)
			var created int64
			if err := rows.Scan(&e.Seq, &e.ID, &e.AccountID, &e.Type, &created, &e.Payload); err != nil {
				return err
			}
			e.Time = fromMS(created)
			out = append(out, e)
		}
		return rows.Err()
	})
	return out, err
}

// Pending implements store.Outbox; the index deliveries_due serves it.
func (s *Store) Pending(ctx context.Context) (int64, time.Time, error) {
	var n int64
	var oldest sql.NullInt64 // NULL when none is pending
	err := s.run(ctx, s.read, &s.dialect.ReadOptions, func(st store.Tx) error {
		t := st.(*tx)
		return t.tx.QueryRowContext(ctx, t.d.rebind("SELECT count(*), min(created_at) FROM deliveries WHERE state = ?"), store.DeliveryPending).Scan(&n, &oldest)
	})
	if err != nil || !oldest.Valid {
		return n, time.Time{}, err
	}
	return n, fromMS(oldest.Int64), nil
}

// Deliveries implements store.Outbox.
func (s *Store) Deliveries(ctx context.Context, q store.OutboxQuery) ([]*store.Delivery, error) {
	var out []*store.Delivery
	err := s.run(ctx, s.read, &s.dialect.ReadOptions, func(st store.Tx) error {
		t := st.(*tx)
		where, args := outboxWhere("deliveries", "d.", q)
		var err error
		out, err = t.deliveries(ctx, false, where, args...)
		return err
	})
	return out, err
}

// outboxWhere builds the WHERE, ORDER and LIMIT of an operator's query on table, whose
// columns the query names with prefix ("d." for deliveries d).
func outboxWhere(table, prefix string, q store.OutboxQuery) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) { conds = append(conds, prefix+cond); args = append(args, arg) }
	if q.AccountID != "" {
		add("account_id = ?", q.AccountID)
	}
	if table == "deliveries" {
		if q.DestinationID != "" {
			add("destination_id = ?", q.DestinationID)
		}
		if q.State != "" {
			add("state = ?", q.State)
		}
		if q.EventID != "" {
			add("event_id = ?", q.EventID)
		}
	}
	if q.BeforeID != "" {
		add("seq < (SELECT seq FROM "+table+" WHERE id = ?)", q.BeforeID)
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	where += " ORDER BY " + prefix + "seq DESC"
	if q.Limit > 0 {
		where += " LIMIT ?"
		args = append(args, q.Limit)
	}
	return where, args
}

// deliveries reads the deliveries d that tail selects, with their events e when withEvents.
func (t *tx) deliveries(ctx context.Context, withEvents bool, tail string, args ...any) ([]*store.Delivery, error) {
	cols := `SELECT d.seq, d.id, d.event_id, d.destination_id, d.account_id, d.state, d.attempts,
		d.next_attempt_at, d.last_error, d.created_at, d.updated_at`
	from := " FROM deliveries d"
	if withEvents {
		cols += ", e.seq, e.type, e.created_at, e.payload"
		from += " JOIN events e ON e.id = d.event_id"
	}
	rows, err := t.tx.QueryContext(ctx, t.d.rebind(cols+from+tail), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Delivery
	for rows.Next() {
		d := new(store.Delivery)
		var next, created, updated int64
		dest := []any{&d.Seq, &d.ID, &d.EventID, &d.DestinationID, &d.AccountID, &d.State, &d.Attempts,
			&next, &d.LastError, &created, &updated}
		var e store.Event
		var eventTime int64
		if withEvents {
			dest = append(dest, &e.Seq, &e.Type, &eventTime, &e.Payload)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		d.NextAttempt, d.CreatedAt, d.UpdatedAt = fromMS(next), fromMS(created), fromMS(updated)
		if withEvents {
			e.ID, e.AccountID, e.Time = d.EventID, d.AccountID, fromMS(eventTime)
			d.Event = &e
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Prune implements store.Outbox.
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.rawWrite(ctx, func(t *tx) (err error) {
		// Deliveries first: SQLite's cascades need foreign keys on, which a copy of the
		// database opened elsewhere may not have.
		if _, err = t.exec(ctx, `DELETE FROM deliveries WHERE event_id IN (SELECT e.id FROM events e WHERE e.created_at < ?
			AND NOT EXISTS (SELECT 1 FROM deliveries p WHERE p.event_id = e.id AND p.state = ?))`, ms(before), store.DeliveryPending); err != nil {
			return err
		}
		n, err = t.exec(ctx, `DELETE FROM events WHERE created_at < ?
			AND NOT EXISTS (SELECT 1 FROM deliveries p WHERE p.event_id = events.id)`, ms(before))
		return err
	})
	return n, err
}

// rawWrite is Write for the outbox's own statements, retried like Write.
func (s *Store) rawWrite(ctx context.Context, fn func(*tx) error) error {
	return s.Write(ctx, func(st store.Tx) error { return fn(st.(*tx)) })
}
