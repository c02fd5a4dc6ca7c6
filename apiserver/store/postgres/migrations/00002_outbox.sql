-- +goose Up
-- The event outbox (store.Outbox). Times are Unix milliseconds.
CREATE TABLE events (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    type       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    payload    BYTEA NOT NULL
);

CREATE INDEX events_account ON events (account_id, seq);
CREATE INDEX events_created ON events (created_at);

CREATE TABLE deliveries (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    event_id        TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    destination_id  TEXT NOT NULL,
    account_id      TEXT NOT NULL,
    state           TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    lease_holder    TEXT NOT NULL DEFAULT '',
    lease_until     BIGINT NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);

-- Serves Claim: a destination's pending deliveries in order, and the due ones.
CREATE INDEX deliveries_destination ON deliveries (destination_id, state, seq);
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);
CREATE INDEX deliveries_event ON deliveries (event_id);

-- +goose Down
DROP TABLE deliveries;
DROP TABLE events;
