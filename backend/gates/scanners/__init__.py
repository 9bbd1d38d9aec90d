"""Scanner adapters: one module per tool, each ``scan(ctx) -> ScanResult``.

Every adapter decides pass/fail from the tool's parsed output, never from its exit
code, runs its subprocess with a timeout, and returns ``skipped`` (never ``pass``)
when the tool is missing or could not finish.
"""
