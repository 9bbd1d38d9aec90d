"""Pull requests of every kind (infra, dev, ADR) through the QA and SecOps gates.

One record and store (:mod:`records`), what differs per kind (:mod:`kinds`), one flow
from proposal to verdict with its corrections (:mod:`flow`, :mod:`correcting`), the
operator's actions (:mod:`actions`), waivers, separation of duties, and the git provider.
"""
