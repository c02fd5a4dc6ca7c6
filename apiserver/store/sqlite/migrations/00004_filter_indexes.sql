-- +goose Up
-- List filters run in SQL over the documents (sqlstore.SQLiteJSON). These index the members
-- that lists are filtered on to find a few objects among many: the owner of keys and
-- credentials, and metadata (the caller's own key for an object). Each expression must be
-- written exactly as sqlstore.SQLiteJSON.Text writes it, or the index serves no query.
CREATE INDEX objects_owner_id ON objects (account_id, kind, parent_id,
    coalesce(CASE json_type(CAST(doc AS TEXT), '$.owner_id') WHEN 'object' THEN json_extract(CAST(doc AS TEXT), '$.owner_id.id') ELSE json_extract(CAST(doc AS TEXT), '$.owner_id') END, ''),
    id);
CREATE INDEX objects_metadata ON objects (account_id, kind, parent_id,
    coalesce(CASE json_type(CAST(doc AS TEXT), '$.metadata') WHEN 'object' THEN json_extract(CAST(doc AS TEXT), '$.metadata.id') ELSE json_extract(CAST(doc AS TEXT), '$.metadata') END, ''),
    id);

-- +goose Down
DROP INDEX objects_metadata;
DROP INDEX objects_owner_id;
