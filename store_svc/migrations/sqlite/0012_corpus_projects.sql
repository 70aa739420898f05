-- corpus names per project
-- A corpus is keyed by (project, name), its project being its filter's ('' for a corpus over
-- all projects): two projects may each have a corpus "docs", so creating one tells nothing of
-- names held elsewhere (with one name space, a token confined to one project was refused a
-- name another project held, and learned that it existed). The history follows its corpus.
-- SQLite cannot change a primary key in place: both tables are rebuilt, rows kept.
CREATE TABLE corpora_v12 (
  project TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  filter_json TEXT NOT NULL DEFAULT '{}',
  observation_ids TEXT NOT NULL DEFAULT '[]',
  stats_json TEXT NOT NULL DEFAULT '{}',
  priming_state TEXT NOT NULL DEFAULT 'unprimed',
  last_job_json TEXT NOT NULL DEFAULT '{}',
  digest_json TEXT NOT NULL DEFAULT '',
  session_id TEXT NOT NULL DEFAULT '',
  created_at_epoch INTEGER NOT NULL,
  updated_at_epoch INTEGER NOT NULL,
  PRIMARY KEY (project, name)
);
INSERT INTO corpora_v12(project, name, description, filter_json, observation_ids, stats_json, priming_state,
                        last_job_json, digest_json, session_id, created_at_epoch, updated_at_epoch)
  SELECT coalesce(json_extract(filter_json, '$.project'), ''), name, description, filter_json, observation_ids,
         stats_json, priming_state, last_job_json, digest_json, session_id, created_at_epoch, updated_at_epoch
  FROM corpora;
CREATE TEMP TABLE corpus_history_v12 AS
  SELECT h.id, c.project AS corpus_project, h.corpus_name, h.question, h.answer, h.citations, h.created_at_epoch
  FROM corpus_history h JOIN corpora_v12 c ON c.name = h.corpus_name;
DROP TABLE corpus_history;
DROP TABLE corpora;
ALTER TABLE corpora_v12 RENAME TO corpora;
CREATE TABLE corpus_history (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  corpus_project TEXT NOT NULL DEFAULT '',
  corpus_name TEXT NOT NULL,
  question TEXT NOT NULL,
  answer TEXT NOT NULL,
  citations TEXT NOT NULL DEFAULT '[]',
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY (corpus_project, corpus_name) REFERENCES corpora(project, name) ON DELETE CASCADE
);
INSERT INTO corpus_history(id, corpus_project, corpus_name, question, answer, citations, created_at_epoch)
  SELECT id, corpus_project, corpus_name, question, answer, citations, created_at_epoch FROM temp.corpus_history_v12;
DROP TABLE temp.corpus_history_v12;
CREATE INDEX idx_corpus_history_name ON corpus_history(corpus_project, corpus_name, id);
