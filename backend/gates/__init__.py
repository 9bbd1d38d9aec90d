"""The QA and SecOps gates: state machine, runner, one adapter per scanner, provisioning."""
