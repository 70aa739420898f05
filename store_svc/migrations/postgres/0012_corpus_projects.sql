-- corpus names per project
-- A corpus is keyed by (project, name), its project being its filter's ('' for a corpus over
-- all projects): two projects may each have a corpus "docs", so creating one tells nothing of
-- names held elsewhere (with one name space, a token confined to one project was refused a
-- name another project held, and learned that it existed). The history follows its corpus.
ALTER TABLE corpus_history DROP CONSTRAINT corpus_history_corpus_name_fkey;
ALTER TABLE corpora ADD COLUMN project TEXT NOT NULL DEFAULT '';
UPDATE corpora SET project = coalesce(filter_json::jsonb ->> 'project', '');
ALTER TABLE corpora DROP CONSTRAINT corpora_pkey;
ALTER TABLE corpora ADD PRIMARY KEY (project, name);
ALTER TABLE corpus_history ADD COLUMN corpus_project TEXT NOT NULL DEFAULT '';
UPDATE corpus_history h SET corpus_project = c.project FROM corpora c WHERE c.name = h.corpus_name;
ALTER TABLE corpus_history ADD FOREIGN KEY (corpus_project, corpus_name)
  REFERENCES corpora(project, name) ON DELETE CASCADE;
DROP INDEX idx_corpus_history_name;
CREATE INDEX idx_corpus_history_name ON corpus_history(corpus_project, corpus_name, id);
