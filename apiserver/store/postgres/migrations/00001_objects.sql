-- +goose Up
CREATE TABLE objects (
    id         TEXT NOT NULL PRIMARY KEY,
    kind       TEXT NOT NULL,
    account_id TEXT NOT NULL,
    parent_id  TEXT NOT NULL,
    doc        BYTEA,
    secret     BYTEA
);

-- Serves List (equality on the first three columns, ordered by id) and Count (prefix).
CREATE INDEX objects_list ON objects (account_id, kind, parent_id, id);

CREATE TABLE unique_keys (
    key       TEXT NOT NULL PRIMARY KEY,
    object_id TEXT NOT NULL REFERENCES objects (id) ON DELETE CASCADE
);

CREATE INDEX unique_keys_object ON unique_keys (object_id);

-- The foreign key on to_id (no cascade) makes the database itself refuse a dangling reference.
CREATE TABLE refs (
    from_id TEXT NOT NULL REFERENCES objects (id) ON DELETE CASCADE,
    to_id   TEXT NOT NULL REFERENCES objects (id),
    PRIMARY KEY (from_id, to_id)
);

CREATE INDEX refs_to ON refs (to_id);

-- +goose Down
DROP TABLE refs;
DROP TABLE unique_keys;
DROP TABLE objects;
