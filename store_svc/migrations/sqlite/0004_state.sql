-- cursors, work state, corpora
CREATE TABLE cursors (
  token TEXT PRIMARY KEY,
  state_json TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  expires_at_epoch INTEGER NOT NULL
);
CREATE INDEX idx_cursors_expires ON cursors(expires_at_epoch);

CREATE TABLE work_state (
  project TEXT NOT NULL,
  key TEXT NOT NULL,
  content TEXT NOT NULL,
  version INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  updated_at_epoch INTEGER NOT NULL,
  PRIMARY KEY (project, key)
);
CREATE TABLE work_state_history (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project TEXT NOT NULL,
  key TEXT NOT NULL,
  content TEXT NOT NULL,
  version INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  updated_at_epoch INTEGER NOT NULL,
  UNIQUE (project, key, version)
);

CREATE TABLE corpora (
  name TEXT PRIMARY KEY,
  description TEXT NOT NULL DEFAULT '',
  filter_json TEXT NOT NULL DEFAULT '{}',
  observation_ids TEXT NOT NULL DEFAULT '[]',
  stats_json TEXT NOT NULL DEFAULT '{}',
  priming_state TEXT NOT NULL DEFAULT 'unprimed',
  last_job_json TEXT NOT NULL DEFAULT '{}',
  digest_json TEXT NOT NULL DEFAULT '',
  session_id TEXT NOT NULL DEFAULT '',
  created_at_epoch INTEGER NOT NULL,
  updated_at_epoch INTEGER NOT NULL
);
CREATE TABLE corpus_history (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  corpus_name TEXT NOT NULL REFERENCES corpora(name) ON DELETE CASCADE,
  question TEXT NOT NULL,
  answer TEXT NOT NULL,
  citations TEXT NOT NULL DEFAULT '[]',
  created_at_epoch INTEGER NOT NULL
);
CREATE INDEX idx_corpus_history_name ON corpus_history(corpus_name, id);
