-- name: waiver_insert
INSERT INTO gate_waivers (pr_id, finding, gate, tool, rule, file, line, operator, reason, created_at)
VALUES (%(pr_id)s, %(finding)s, %(gate)s, %(tool)s, %(rule)s, %(file)s, %(line)s, %(operator)s,
        %(reason)s, %(now)s)
ON CONFLICT (pr_id, finding) DO NOTHING

-- name: waivers_of_pr
SELECT pr_id, finding, gate, tool, rule, file, line, operator, reason, created_at
FROM gate_waivers WHERE pr_id = %(pr_id)s ORDER BY created_at, finding
