-- +goose Up
-- Each object's unique keys and refs, also on its own row, as the JSON array of strings the
-- store writes (sorted, no duplicates). Reading an object reads them from its row: under
-- SERIALIZABLE, reading them from unique_keys and refs took page-level predicate locks on
-- unique_keys_object and refs_pkey, which every write of an object with keys or refs
-- touches, and that made concurrent writes of one account conflict. unique_keys and refs
-- stay the truth for uniqueness, existence and "who references this".
ALTER TABLE objects ADD COLUMN key_set TEXT NOT NULL DEFAULT '[]';
ALTER TABLE objects ADD COLUMN ref_set TEXT NOT NULL DEFAULT '[]';
UPDATE objects o SET
    key_set = coalesce((SELECT '[' || string_agg(to_json(key)::text, ',' ORDER BY key COLLATE "C") || ']'
        FROM unique_keys WHERE object_id = o.id), '[]'),
    ref_set = coalesce((SELECT '[' || string_agg(to_json(to_id)::text, ',' ORDER BY to_id COLLATE "C") || ']'
        FROM refs WHERE from_id = o.id), '[]');

-- +goose Down
ALTER TABLE objects DROP COLUMN ref_set;
ALTER TABLE objects DROP COLUMN key_set;
