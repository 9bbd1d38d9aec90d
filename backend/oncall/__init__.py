"""On call: what waits for a human reaches one in time, even one not looking at the console.

Gauges computed from the database at scrape time (:mod:`gauges`), so every ``serve`` on one
PostgreSQL reports the same numbers to Prometheus.
"""
