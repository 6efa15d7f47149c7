-- A tasker.db of schema version 7, made by the Tasker before schema 8 (main at dbb2c48): four tasks added,
-- tasks 1 and 2 deleted at the command line (receipts r1, r2 with kept copies), r1 undone (r3).
-- Loaded by ReceiptMigrationCommandTests through the sqlite3 shell.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE tasks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  title TEXT NOT NULL,
  notes TEXT NOT NULL DEFAULT '',
  due TEXT CHECK (due IS NULL OR due GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
  estimate_minutes INTEGER CHECK (estimate_minutes IS NULL OR estimate_minutes >= 0),
  priority INTEGER NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 3),
  energy INTEGER CHECK (energy IS NULL OR energy BETWEEN 1 AND 3),
  status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done')),
  created_at INTEGER NOT NULL,
  completed_at INTEGER,
  contexts TEXT NOT NULL DEFAULT ''
, plan_order INTEGER CHECK (plan_order IS NULL OR plan_order >= 1));
INSERT INTO tasks VALUES(1,'a','',NULL,NULL,0,NULL,'open',1796242879,NULL,'',NULL);
INSERT INTO tasks VALUES(3,'c','',NULL,NULL,0,NULL,'open',1796242879,NULL,'',NULL);
INSERT INTO tasks VALUES(4,'d','',NULL,NULL,0,NULL,'open',1796242879,NULL,'',NULL);
CREATE TABLE pages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  title TEXT NOT NULL,
  body TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE attachments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id INTEGER REFERENCES tasks (id) ON DELETE CASCADE,
  page_id INTEGER REFERENCES pages (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  byte_count INTEGER NOT NULL CHECK (byte_count >= 0),
  media_type TEXT NOT NULL,
  file TEXT NOT NULL UNIQUE,
  key_id TEXT,
  created_at INTEGER NOT NULL,
  CHECK ((task_id IS NULL) <> (page_id IS NULL))
);
CREATE TABLE settings (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE gate_approvals (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  key_id TEXT NOT NULL,
  assistant TEXT NOT NULL,
  tool TEXT NOT NULL,
  arguments TEXT NOT NULL,
  reason TEXT NOT NULL,
  summary TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied')),
  resolved_at INTEGER
);
CREATE TABLE gate_receipts_refused (
  id INTEGER PRIMARY KEY, at, actor, key_id, assistant, tool, decision, target, summary, undo, undoes, approval
);
CREATE TABLE gate_receipts (
  id INTEGER PRIMARY KEY AUTOINCREMENT CHECK (id >= 1),
  at INTEGER NOT NULL CHECK (typeof(at) = 'integer' AND at >= 0),
  actor TEXT NOT NULL CHECK (actor IN ('trusted', 'assistant', 'user')),
  key_id TEXT CHECK (key_id IS NULL OR (typeof(key_id) = 'text' AND key_id GLOB
    'tkid_[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]')),
  assistant TEXT CHECK (assistant IS NULL OR (typeof(assistant) = 'text' AND length(assistant) BETWEEN 1 AND 64)),
  tool TEXT NOT NULL CHECK (tool IN ('add_task', 'edit_task', 'complete_task', 'delete_task', 'add_page', 'delete_page', 'undo')),
  decision TEXT NOT NULL CHECK (typeof(decision) = 'text'
    AND (decision IN ('allow', 'ask:risky', 'ask:quiet-hours', 'ask:quiet-hours-undecidable', 'refuse:budget-exhausted', 'refuse:budget-undecidable', 'approved', 'denied', 'undone', 'changed')
    OR (decision GLOB 'refuse:missing-grant:[a-z]*' AND length(decision) <= 85
    AND substr(decision, 22) NOT GLOB '*[^a-z0-9._:-]*'))),
  target TEXT NOT NULL CHECK (typeof(target) = 'text'),
  summary TEXT NOT NULL CHECK (typeof(summary) = 'text'),
  undo TEXT CHECK (undo IS NULL OR typeof(undo) = 'text'),
  undoes INTEGER UNIQUE REFERENCES gate_receipts (id)
    CHECK (undoes IS NULL OR (typeof(undoes) = 'integer' AND undoes >= 1 AND undoes < id)),
  approval INTEGER REFERENCES gate_approvals (id)
    CHECK (approval IS NULL OR (typeof(approval) = 'integer' AND approval >= 1)), chain TEXT,
  CONSTRAINT receipt_rule_4 CHECK ((actor = 'assistant') = (key_id IS NOT NULL)
    AND (actor = 'assistant') = (assistant IS NOT NULL)),
  CONSTRAINT receipt_rule_5 CHECK (coalesce(CASE actor WHEN 'trusted' THEN (CASE WHEN instr(decision, ':') > 0 THEN substr(decision, 1, instr(decision, ':') - 1) ELSE decision END) IN ('allow') WHEN 'assistant' THEN (CASE WHEN instr(decision, ':') > 0 THEN substr(decision, 1, instr(decision, ':') - 1) ELSE decision END) IN ('allow', 'ask', 'refuse', 'approved') WHEN 'user' THEN (CASE WHEN instr(decision, ':') > 0 THEN substr(decision, 1, instr(decision, ':') - 1) ELSE decision END) IN ('changed', 'denied', 'undone') ELSE 0 END
    AND (tool = 'undo') = (decision = 'undone')
    AND ((CASE WHEN instr(decision, ':') > 0 THEN substr(decision, 1, instr(decision, ':') - 1) ELSE decision END) <> 'changed'
      OR tool IN ('edit_task', 'delete_task', 'delete_page'))
    AND (tool NOT IN ('delete_page')
      OR (CASE WHEN instr(decision, ':') > 0 THEN substr(decision, 1, instr(decision, ':') - 1) ELSE decision END) = 'changed'), 0)),
  CONSTRAINT receipt_rule_6 CHECK (coalesce(CASE (CASE WHEN instr(decision, ':') > 0 THEN substr(decision, 1, instr(decision, ':') - 1) ELSE decision END)
    WHEN 'allow' THEN CASE tool WHEN 'add_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'edit_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6))) OR (target GLOB 'tasks/[1-9]*,[1-9]*' AND substr(target, 7) NOT GLOB '*[^0-9,]*'
  AND substr(target, 7) NOT GLOB '*,' AND substr(target, 7) NOT GLOB '*,,*'
  AND substr(target, 7) NOT GLOB '*,0*' AND json_valid('[' || substr(target, 7) || ']')
  AND json_array_length('[' || substr(target, 7) || ']') BETWEEN 2 AND 100)
WHEN 'complete_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'delete_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'add_page' THEN (target GLOB 'page/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'delete_page' THEN (target GLOB 'page/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'undo' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6))) ELSE 0 END
WHEN 'ask' THEN target = 'approval/' || approval
WHEN 'refuse' THEN target = ''
WHEN 'approved' THEN CASE tool WHEN 'add_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'edit_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6))) OR (target GLOB 'tasks/[1-9]*,[1-9]*' AND substr(target, 7) NOT GLOB '*[^0-9,]*'
  AND substr(target, 7) NOT GLOB '*,' AND substr(target, 7) NOT GLOB '*,,*'
  AND substr(target, 7) NOT GLOB '*,0*' AND json_valid('[' || substr(target, 7) || ']')
  AND json_array_length('[' || substr(target, 7) || ']') BETWEEN 2 AND 100)
WHEN 'complete_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'delete_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'add_page' THEN (target GLOB 'page/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'delete_page' THEN (target GLOB 'page/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'undo' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6))) ELSE 0 END
WHEN 'denied' THEN target = 'approval/' || approval
WHEN 'undone' THEN target = 'receipt/' || undoes
WHEN 'changed' THEN CASE tool WHEN 'add_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'edit_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6))) OR (target GLOB 'tasks/[1-9]*,[1-9]*' AND substr(target, 7) NOT GLOB '*[^0-9,]*'
  AND substr(target, 7) NOT GLOB '*,' AND substr(target, 7) NOT GLOB '*,,*'
  AND substr(target, 7) NOT GLOB '*,0*' AND json_valid('[' || substr(target, 7) || ']')
  AND json_array_length('[' || substr(target, 7) || ']') BETWEEN 2 AND 100)
WHEN 'complete_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'delete_task' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'add_page' THEN (target GLOB 'page/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'delete_page' THEN (target GLOB 'page/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6)))
WHEN 'undo' THEN (target GLOB 'task/*' AND (CAST(substr(target, 6) AS INTEGER) >= 1 AND CAST(CAST(substr(target, 6) AS INTEGER) AS TEXT) = substr(target, 6))) ELSE 0 END
    ELSE 0 END, 0)),
  CONSTRAINT receipt_rule_7 CHECK (coalesce(CASE
    WHEN undo IS NULL THEN NOT ((CASE WHEN instr(decision, ':') > 0 THEN substr(decision, 1, instr(decision, ':') - 1) ELSE decision END) IN ('allow', 'approved', 'changed') AND tool IN ('add_task', 'add_page'))
    WHEN (CASE WHEN instr(decision, ':') > 0 THEN substr(decision, 1, instr(decision, ':') - 1) ELSE decision END) NOT IN ('allow', 'approved', 'changed') THEN 0
    WHEN tool = 'add_task' THEN target GLOB 'task/*' AND undo = 'delete-task:' || substr(target, 6)
WHEN tool = 'add_page' THEN target GLOB 'page/*' AND undo = 'delete-page:' || substr(target, 6)
WHEN tool = 'complete_task' THEN target GLOB 'task/*' AND undo = 'reopen-task:' || substr(target, 6)
WHEN tool = 'delete_task' THEN target GLOB 'task/*' AND undo = 'restore-task:' || substr(target, 6)
WHEN tool = 'delete_page' THEN target GLOB 'page/*' AND undo = 'restore-page:' || substr(target, 6)
WHEN tool = 'edit_task' THEN target GLOB 'task/*' AND undo = 'revert-edit:' || substr(target, 6)
    ELSE 0 END, 0)),
  CONSTRAINT receipt_rule_8 CHECK ((decision = 'undone') = (undoes IS NOT NULL)),
  CONSTRAINT receipt_rule_9 CHECK ((approval IS NOT NULL) = ((CASE WHEN instr(decision, ':') > 0 THEN substr(decision, 1, instr(decision, ':') - 1) ELSE decision END) IN ('ask', 'approved', 'denied')))
);
INSERT INTO gate_receipts VALUES(1,1796242879,'user',NULL,NULL,'delete_task','changed','task/1','deleted task 1 ''a''','restore-task:1',NULL,NULL,'8f5a2a6cd71feacdeb173d3fd61c62e0c62b2d28faf01d947a61ff382b8a024c');
INSERT INTO gate_receipts VALUES(2,1796242879,'user',NULL,NULL,'delete_task','changed','task/2','deleted task 2 ''b''','restore-task:2',NULL,NULL,'b30a7b131b95118f39046bd71a2368863691484aa280d22e2c31438ff89df063');
INSERT INTO gate_receipts VALUES(3,1796242879,'user',NULL,NULL,'undo','undone','receipt/1','undid r1: restored task 1',NULL,1,NULL,'772b4f6f17c7c54a2d46f371812dc9b0fabd11eba5ed98dc7f6d1115eccc41d2');
CREATE TABLE gate_undo_tasks (
  receipt INTEGER PRIMARY KEY REFERENCES gate_receipts (id),
  fields TEXT NOT NULL,
  id INTEGER NOT NULL CHECK (id >= 1),
  title TEXT NOT NULL,
  notes TEXT NOT NULL,
  due TEXT,
  estimate_minutes INTEGER,
  priority INTEGER NOT NULL,
  energy INTEGER,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  completed_at INTEGER,
  contexts TEXT NOT NULL
);
INSERT INTO gate_undo_tasks VALUES(2,'*',2,'b','',NULL,NULL,0,NULL,'open',1796242879,NULL,'');
CREATE TABLE gate_undo_pages (
  receipt INTEGER PRIMARY KEY REFERENCES gate_receipts (id),
  id INTEGER NOT NULL CHECK (id >= 1),
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE gate_undo_attachments (
  receipt INTEGER NOT NULL REFERENCES gate_receipts (id),
  id INTEGER PRIMARY KEY,
  task_id INTEGER,
  page_id INTEGER,
  name TEXT NOT NULL,
  byte_count INTEGER NOT NULL,
  media_type TEXT NOT NULL,
  file TEXT NOT NULL UNIQUE,
  key_id TEXT,
  created_at INTEGER NOT NULL
);
CREATE TABLE provider_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  provider TEXT NOT NULL,
  origin TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('plan', 'ask', 'test')),
  candidates INTEGER NOT NULL CHECK (candidates >= 0),
  bytes_sent INTEGER NOT NULL CHECK (bytes_sent >= 0),
  bytes_received INTEGER NOT NULL CHECK (bytes_received >= 0),
  status INTEGER CHECK (status IS NULL OR status BETWEEN 100 AND 999),
  outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'key_rejected', 'rate_limited', 'provider_failed',
    'answer_refused', 'unreachable', 'timed_out', 'tls_failed', 'redirect_refused', 'too_large', 'transport'))
);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('tasks',4);
INSERT INTO sqlite_sequence VALUES('gate_receipts',3);
INSERT INTO sqlite_sequence VALUES('attachments',0);
CREATE INDEX attachments_task ON attachments (task_id);
CREATE INDEX attachments_page ON attachments (page_id);
CREATE TRIGGER gate_receipts_refused_update BEFORE UPDATE ON gate_receipts_refused
BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
CREATE TRIGGER gate_receipts_refused_delete BEFORE DELETE ON gate_receipts_refused
BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
CREATE INDEX gate_receipts_key_at ON gate_receipts (key_id, at);
CREATE TRIGGER gate_receipts_append_only_delete BEFORE DELETE ON gate_receipts
BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
CREATE TRIGGER gate_receipts_append_only_insert BEFORE INSERT ON gate_receipts
WHEN EXISTS (SELECT 1 FROM gate_receipts WHERE id = NEW.id OR undoes = NEW.undoes)
BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
CREATE TRIGGER gate_receipts_bulk_target BEFORE INSERT ON gate_receipts WHEN NEW.target GLOB 'tasks/*' AND json_valid('[' || substr(NEW.target, 7) || ']') AND (
  EXISTS (SELECT 1 FROM json_each('[' || substr(NEW.target, 7) || ']') WHERE typeof(value) <> 'integer' OR value < 1)
  OR (SELECT count(DISTINCT value) FROM json_each('[' || substr(NEW.target, 7) || ']'))
    <> json_array_length('[' || substr(NEW.target, 7) || ']'))
BEGIN SELECT RAISE(ABORT, 'receipt rule 6: a bulk target names 2 to 100 different task ids'); END;
CREATE INDEX gate_undo_tasks_id ON gate_undo_tasks (id);
CREATE INDEX gate_undo_attachments_receipt ON gate_undo_attachments (receipt);
CREATE INDEX tasks_listing ON tasks (
  due IS NULL, due, id, status, title, estimate_minutes, priority, energy, contexts, plan_order
);
CREATE TRIGGER gate_receipts_append_only_update BEFORE UPDATE ON gate_receipts
BEGIN SELECT RAISE(ABORT, 'gate receipts are append-only'); END;
PRAGMA user_version = 7;
COMMIT;
