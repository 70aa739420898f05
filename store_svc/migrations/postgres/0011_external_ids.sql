-- external ids per project
-- A caller's external id (an import key, an outbox retry key) is unique within its project, not
-- across the server: a write whose external id another project holds is then answered as if that
-- record did not exist (a new record of the caller's project), instead of a refusal that told
-- the caller the id is held elsewhere. Prompts have no project column: theirs is unique per
-- session, and the store keeps it unique per project (it looks the id up in the session's
-- project under the write lock before inserting).
DROP INDEX ux_sdk_sessions_external;
CREATE UNIQUE INDEX ux_sdk_sessions_external ON sdk_sessions(project, external_id) WHERE external_id IS NOT NULL;
DROP INDEX ux_observations_external;
CREATE UNIQUE INDEX ux_observations_external ON observations(project, external_id) WHERE external_id IS NOT NULL;
DROP INDEX ux_session_summaries_external;
CREATE UNIQUE INDEX ux_session_summaries_external ON session_summaries(project, external_id)
  WHERE external_id IS NOT NULL;
DROP INDEX ux_user_prompts_external;
CREATE UNIQUE INDEX ux_user_prompts_external ON user_prompts(session_db_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX idx_user_prompts_external ON user_prompts(external_id) WHERE external_id IS NOT NULL;
