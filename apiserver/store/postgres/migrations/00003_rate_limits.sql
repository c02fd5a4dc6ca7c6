-- +goose Up
-- The token buckets of the API rate limit, shared by the replicas (store.RateBuckets).
-- UNLOGGED: a transaction that writes only this table writes no WAL, so its commit waits
-- for no disk flush and a take costs one round trip. A crash empties the table, which only
-- gives every account its full allowance again.
CREATE UNLOGGED TABLE rate_limits (
    bucket     TEXT NOT NULL PRIMARY KEY,
    tokens     DOUBLE PRECISION NOT NULL, -- left after the last take
    updated_at BIGINT NOT NULL,           -- of the last take, Unix microseconds
    taken      BIGINT NOT NULL            -- by the last take
);

-- Every audited write reads its account's event subscriptions (apiserver/outbox.go). Read
-- through objects_list, that range shares B-tree pages with the objects every write inserts,
-- and SERIALIZABLE's page-level predicate locks turned each pair of concurrent writes of an
-- account into a conflict. Read through this index (List names the kind as a literal so that
-- the planner may use it), the lock is on pages only subscriptions' writes touch.
CREATE INDEX objects_event_subscriptions ON objects (account_id, parent_id, id) WHERE kind = 'event_subscription';

-- +goose Down
DROP INDEX objects_event_subscriptions;
DROP TABLE rate_limits;
