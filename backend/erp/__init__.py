"""The ERP database: grants spec, per-tool roles and connections, and the seed loader."""
