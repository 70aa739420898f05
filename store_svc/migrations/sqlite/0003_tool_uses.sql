-- raw tool uses
CREATE TABLE tool_uses (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_db_id INTEGER REFERENCES sdk_sessions(id) ON DELETE CASCADE,
  content_session_id TEXT NOT NULL,
  tool_use_id TEXT,
  tool_name TEXT NOT NULL,
  tool_input TEXT,
  tool_response TEXT,
  input_truncated INTEGER NOT NULL DEFAULT 0,
  response_truncated INTEGER NOT NULL DEFAULT 0,
  input_size INTEGER NOT NULL DEFAULT 0,
  response_size INTEGER NOT NULL DEFAULT 0,
  cwd TEXT,
  prompt_number INTEGER,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL
);
CREATE UNIQUE INDEX ux_tool_uses_session_call ON tool_uses(content_session_id, tool_use_id)
  WHERE tool_use_id IS NOT NULL;
CREATE INDEX idx_tool_uses_session ON tool_uses(session_db_id, created_at_epoch);
CREATE INDEX idx_tool_uses_tool_use_id ON tool_uses(tool_use_id);

CREATE TABLE observation_tool_uses (
  observation_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
  tool_use_id INTEGER NOT NULL REFERENCES tool_uses(id) ON DELETE CASCADE,
  PRIMARY KEY (observation_id, tool_use_id)
) WITHOUT ROWID;
CREATE INDEX idx_observation_tool_uses_tool ON observation_tool_uses(tool_use_id);
