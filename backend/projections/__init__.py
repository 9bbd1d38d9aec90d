"""Read models kept as tables, updated in the same transaction as each append.

:class:`~backend.projections.roster_table.RosterProjection` is the roster's: the facts of
:func:`backend.agents.roster_facts.facts_of` upserted per event (O(1) statements, commutative
by event id), periodic snapshots for time travel (:mod:`backend.projections.snapshots`) and
the rebuild from the log (:mod:`backend.projections.rebuild`, ``cadencia projections
rebuild``).
"""
