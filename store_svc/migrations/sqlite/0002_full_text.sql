-- full-text indexes and change feed
CREATE TABLE change_feed (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind INTEGER NOT NULL,
  record_id INTEGER NOT NULL,
  op INTEGER NOT NULL,
  created_at_epoch INTEGER NOT NULL
);

CREATE VIRTUAL TABLE observations_fts USING fts5(title, subtitle, narrative, text, facts, concepts, content='observations', content_rowid='id',
  tokenize='porter unicode61');
CREATE VIRTUAL TABLE observations_tri USING fts5(title, subtitle, narrative, text, facts, concepts, content='observations', content_rowid='id', tokenize='trigram');
CREATE TRIGGER observations_ai AFTER INSERT ON observations BEGIN
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, text, facts, concepts) VALUES (new.id, new.title, new.subtitle, new.narrative, new.text, new.facts, new.concepts);
  INSERT INTO observations_tri(rowid, title, subtitle, narrative, text, facts, concepts) SELECT new.id, new.title, new.subtitle, new.narrative, new.text, new.facts, new.concepts WHERE coalesce(new.has_cjk, (coalesce(new.title, '') || ' ' || coalesce(new.subtitle, '') || ' ' || coalesce(new.narrative, '') || ' ' || coalesce(new.text, '') || ' ' || coalesce(new.facts, '') || ' ' || coalesce(new.concepts, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (1, new.id, 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER observations_ad AFTER DELETE ON observations BEGIN
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, text, facts, concepts) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.text, old.facts, old.concepts);
  INSERT INTO observations_tri(observations_tri, rowid, title, subtitle, narrative, text, facts, concepts) SELECT 'delete', old.id, old.title, old.subtitle, old.narrative, old.text, old.facts, old.concepts WHERE coalesce(old.has_cjk, (coalesce(old.title, '') || ' ' || coalesce(old.subtitle, '') || ' ' || coalesce(old.narrative, '') || ' ' || coalesce(old.text, '') || ' ' || coalesce(old.facts, '') || ' ' || coalesce(old.concepts, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (1, old.id, 2, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER observations_au AFTER UPDATE ON observations BEGIN
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, text, facts, concepts) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.text, old.facts, old.concepts);
  INSERT INTO observations_tri(observations_tri, rowid, title, subtitle, narrative, text, facts, concepts) SELECT 'delete', old.id, old.title, old.subtitle, old.narrative, old.text, old.facts, old.concepts WHERE coalesce(old.has_cjk, (coalesce(old.title, '') || ' ' || coalesce(old.subtitle, '') || ' ' || coalesce(old.narrative, '') || ' ' || coalesce(old.text, '') || ' ' || coalesce(old.facts, '') || ' ' || coalesce(old.concepts, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, text, facts, concepts) VALUES (new.id, new.title, new.subtitle, new.narrative, new.text, new.facts, new.concepts);
  INSERT INTO observations_tri(rowid, title, subtitle, narrative, text, facts, concepts) SELECT new.id, new.title, new.subtitle, new.narrative, new.text, new.facts, new.concepts WHERE coalesce(new.has_cjk, (coalesce(new.title, '') || ' ' || coalesce(new.subtitle, '') || ' ' || coalesce(new.narrative, '') || ' ' || coalesce(new.text, '') || ' ' || coalesce(new.facts, '') || ' ' || coalesce(new.concepts, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (1, new.id, 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;

CREATE VIRTUAL TABLE session_summaries_fts USING fts5(request, investigated, learned, completed, next_steps, notes, content='session_summaries', content_rowid='id',
  tokenize='porter unicode61');
CREATE VIRTUAL TABLE session_summaries_tri USING fts5(request, investigated, learned, completed, next_steps, notes, content='session_summaries', content_rowid='id', tokenize='trigram');
CREATE TRIGGER session_summaries_ai AFTER INSERT ON session_summaries BEGIN
  INSERT INTO session_summaries_fts(rowid, request, investigated, learned, completed, next_steps, notes) VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
  INSERT INTO session_summaries_tri(rowid, request, investigated, learned, completed, next_steps, notes) SELECT new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes WHERE coalesce(new.has_cjk, (coalesce(new.request, '') || ' ' || coalesce(new.investigated, '') || ' ' || coalesce(new.learned, '') || ' ' || coalesce(new.completed, '') || ' ' || coalesce(new.next_steps, '') || ' ' || coalesce(new.notes, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (2, new.id, 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER session_summaries_ad AFTER DELETE ON session_summaries BEGIN
  INSERT INTO session_summaries_fts(session_summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes) VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
  INSERT INTO session_summaries_tri(session_summaries_tri, rowid, request, investigated, learned, completed, next_steps, notes) SELECT 'delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes WHERE coalesce(old.has_cjk, (coalesce(old.request, '') || ' ' || coalesce(old.investigated, '') || ' ' || coalesce(old.learned, '') || ' ' || coalesce(old.completed, '') || ' ' || coalesce(old.next_steps, '') || ' ' || coalesce(old.notes, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (2, old.id, 2, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER session_summaries_au AFTER UPDATE ON session_summaries BEGIN
  INSERT INTO session_summaries_fts(session_summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes) VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
  INSERT INTO session_summaries_tri(session_summaries_tri, rowid, request, investigated, learned, completed, next_steps, notes) SELECT 'delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes WHERE coalesce(old.has_cjk, (coalesce(old.request, '') || ' ' || coalesce(old.investigated, '') || ' ' || coalesce(old.learned, '') || ' ' || coalesce(old.completed, '') || ' ' || coalesce(old.next_steps, '') || ' ' || coalesce(old.notes, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO session_summaries_fts(rowid, request, investigated, learned, completed, next_steps, notes) VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
  INSERT INTO session_summaries_tri(rowid, request, investigated, learned, completed, next_steps, notes) SELECT new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes WHERE coalesce(new.has_cjk, (coalesce(new.request, '') || ' ' || coalesce(new.investigated, '') || ' ' || coalesce(new.learned, '') || ' ' || coalesce(new.completed, '') || ' ' || coalesce(new.next_steps, '') || ' ' || coalesce(new.notes, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (2, new.id, 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;

CREATE VIRTUAL TABLE user_prompts_fts USING fts5(prompt_text, content='user_prompts', content_rowid='id',
  tokenize='porter unicode61');
CREATE VIRTUAL TABLE user_prompts_tri USING fts5(prompt_text, content='user_prompts', content_rowid='id', tokenize='trigram');
CREATE TRIGGER user_prompts_ai AFTER INSERT ON user_prompts BEGIN
  INSERT INTO user_prompts_fts(rowid, prompt_text) VALUES (new.id, new.prompt_text);
  INSERT INTO user_prompts_tri(rowid, prompt_text) SELECT new.id, new.prompt_text WHERE coalesce(new.has_cjk, (coalesce(new.prompt_text, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (3, new.id, 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER user_prompts_ad AFTER DELETE ON user_prompts BEGIN
  INSERT INTO user_prompts_fts(user_prompts_fts, rowid, prompt_text) VALUES ('delete', old.id, old.prompt_text);
  INSERT INTO user_prompts_tri(user_prompts_tri, rowid, prompt_text) SELECT 'delete', old.id, old.prompt_text WHERE coalesce(old.has_cjk, (coalesce(old.prompt_text, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (3, old.id, 2, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER user_prompts_au AFTER UPDATE ON user_prompts BEGIN
  INSERT INTO user_prompts_fts(user_prompts_fts, rowid, prompt_text) VALUES ('delete', old.id, old.prompt_text);
  INSERT INTO user_prompts_tri(user_prompts_tri, rowid, prompt_text) SELECT 'delete', old.id, old.prompt_text WHERE coalesce(old.has_cjk, (coalesce(old.prompt_text, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO user_prompts_fts(rowid, prompt_text) VALUES (new.id, new.prompt_text);
  INSERT INTO user_prompts_tri(rowid, prompt_text) SELECT new.id, new.prompt_text WHERE coalesce(new.has_cjk, (coalesce(new.prompt_text, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (3, new.id, 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
