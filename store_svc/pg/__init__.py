"""The PostgreSQL backend of store_svc (the server runtime): adapter, schema, full text, pool."""
