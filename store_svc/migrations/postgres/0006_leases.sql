-- leases
CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at_epoch BIGINT NOT NULL,
  acquired_at_epoch BIGINT NOT NULL,
  renewed_at_epoch BIGINT NOT NULL
);
