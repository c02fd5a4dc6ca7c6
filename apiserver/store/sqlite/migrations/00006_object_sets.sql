-- +goose Up
-- Each object's unique keys and refs, also on its own row, as the JSON array of strings the
-- store writes (sorted, no duplicates): an object is read from its row alone, as on
-- PostgreSQL (see its 00006). unique_keys and refs stay the truth for uniqueness, existence
-- and "who references this".
ALTER TABLE objects ADD COLUMN key_set TEXT NOT NULL DEFAULT '[]';
ALTER TABLE objects ADD COLUMN ref_set TEXT NOT NULL DEFAULT '[]';
UPDATE objects SET
    key_set = (SELECT json_group_array(key) FROM (SELECT key FROM unique_keys WHERE object_id = objects.id ORDER BY key)),
    ref_set = (SELECT json_group_array(to_id) FROM (SELECT to_id FROM refs WHERE from_id = objects.id ORDER BY to_id));

-- +goose Down
ALTER TABLE objects DROP COLUMN ref_set;
ALTER TABLE objects DROP COLUMN key_set;
