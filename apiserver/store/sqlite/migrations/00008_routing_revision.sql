-- +goose Up
-- The routing revision (store.Routing): a counter per account that every write transaction
-- changing a kind of store.RoutingKinds moves in its account's row; their sum is the
-- revision each server polls to rebuild its routing snapshot when it moves.
CREATE TABLE routing_revision (
    account_id TEXT NOT NULL PRIMARY KEY,
    revision   INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE routing_revision;
