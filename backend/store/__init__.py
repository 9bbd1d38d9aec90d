"""Database handles, migrations, named queries, the unit of work, data files, credentials."""
