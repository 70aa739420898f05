-- sessions, prompts, observations, summaries
CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  content_session_id TEXT NOT NULL,
  memory_session_id TEXT UNIQUE,
  project TEXT NOT NULL,
  platform_source TEXT NOT NULL DEFAULT 'claude',
  user_prompt TEXT,
  started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL,
  completed_at TEXT,
  completed_at_epoch INTEGER,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'failed')),
  prompt_counter INTEGER NOT NULL DEFAULT 0,
  custom_title TEXT,
  external_id TEXT
);
CREATE UNIQUE INDEX ux_sdk_sessions_platform_content ON sdk_sessions(platform_source, content_session_id);
CREATE UNIQUE INDEX ux_sdk_sessions_external ON sdk_sessions(external_id) WHERE external_id IS NOT NULL;
CREATE INDEX idx_sdk_sessions_content ON sdk_sessions(content_session_id);
CREATE INDEX idx_sdk_sessions_project ON sdk_sessions(project);
CREATE INDEX idx_sdk_sessions_started ON sdk_sessions(started_at_epoch DESC);

CREATE TABLE user_prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_db_id INTEGER REFERENCES sdk_sessions(id) ON DELETE CASCADE,
  content_session_id TEXT NOT NULL,
  prompt_number INTEGER NOT NULL,
  prompt_text TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  external_id TEXT,
  has_cjk INTEGER
);
CREATE INDEX idx_user_prompts_session ON user_prompts(session_db_id, prompt_number);
CREATE INDEX idx_user_prompts_content ON user_prompts(content_session_id, prompt_number);
CREATE INDEX idx_user_prompts_created ON user_prompts(created_at_epoch);
CREATE UNIQUE INDEX ux_user_prompts_external ON user_prompts(external_id) WHERE external_id IS NOT NULL;

CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  text TEXT,
  type TEXT NOT NULL,
  title TEXT,
  subtitle TEXT,
  facts TEXT,
  narrative TEXT,
  concepts TEXT,
  files_read TEXT,
  files_modified TEXT,
  prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  content_hash TEXT,
  external_id TEXT,
  has_cjk INTEGER
);
CREATE UNIQUE INDEX ux_observations_session_hash ON observations(memory_session_id, content_hash);
CREATE UNIQUE INDEX ux_observations_external ON observations(external_id) WHERE external_id IS NOT NULL;
CREATE INDEX idx_observations_project_created ON observations(project, created_at_epoch);
CREATE INDEX idx_observations_created ON observations(created_at_epoch);

CREATE TABLE session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  request TEXT,
  investigated TEXT,
  learned TEXT,
  completed TEXT,
  next_steps TEXT,
  files_read TEXT,
  files_edited TEXT,
  notes TEXT,
  prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  external_id TEXT,
  has_cjk INTEGER
);
CREATE INDEX idx_session_summaries_session ON session_summaries(memory_session_id, created_at_epoch);
CREATE INDEX idx_session_summaries_project_created ON session_summaries(project, created_at_epoch);
CREATE INDEX idx_session_summaries_created ON session_summaries(created_at_epoch);
CREATE UNIQUE INDEX ux_session_summaries_external ON session_summaries(external_id) WHERE external_id IS NOT NULL;
