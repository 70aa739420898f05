-- access tokens, writers, cursor owners
CREATE TABLE access_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_name TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  projects TEXT NOT NULL DEFAULT '[]',
  all_projects INTEGER NOT NULL DEFAULT 0,
  created_at_epoch BIGINT NOT NULL,
  revoked_at_epoch BIGINT NOT NULL DEFAULT 0
);
ALTER TABLE sdk_sessions ADD COLUMN writer TEXT NOT NULL DEFAULT '';
ALTER TABLE user_prompts ADD COLUMN writer TEXT NOT NULL DEFAULT '';
ALTER TABLE observations ADD COLUMN writer TEXT NOT NULL DEFAULT '';
ALTER TABLE session_summaries ADD COLUMN writer TEXT NOT NULL DEFAULT '';
ALTER TABLE tool_uses ADD COLUMN writer TEXT NOT NULL DEFAULT '';
ALTER TABLE cursors ADD COLUMN owner TEXT NOT NULL DEFAULT '';
