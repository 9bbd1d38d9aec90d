"""Dev tasks: the PO's work items, the ``dev-<module>`` agents that do them in a real git
worktree each, and the ``dev`` jobs that run those agents one task per module at a time.
Their PRs go through the one PR pipeline (:mod:`backend.prs`)."""
