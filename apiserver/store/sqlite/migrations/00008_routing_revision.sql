-- +goose Up
-- The routing revision (store.Routing): one counter that every write transaction changing a
-- kind of store.RoutingKinds moves, so that each server rebuilds its routing snapshot when it
-- sees the counter move.
CREATE TABLE routing_revision (
    id       INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    revision INTEGER NOT NULL
) STRICT;
INSERT INTO routing_revision (id, revision) VALUES (1, 0);

-- +goose Down
DROP TABLE routing_revision;
