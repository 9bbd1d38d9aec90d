# InterrupcoesPorTeto is published by the orchestrator each time the teto de voltas
# stops a tool before it runs: the signal that the agent's LOOP misbehaved, not just
# that one action was denied. One alarm per tool, so the page names the tool.
resource "aws_cloudwatch_metric_alarm" "interrupcoes_por_teto" {
  for_each = local.ferramentas

  alarm_name          = "cadencia-interrupcoes-por-teto-${each.key}"
  alarm_description   = "The teto de voltas interrupted ${each.key}: an agent loop insisted on the same tool."
  namespace           = "Cadencia/AgenteAtendimento"
  metric_name         = "InterrupcoesPorTeto"
  dimensions          = { Ferramenta = each.key }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  threshold           = var.limiar_interrupcoes
  comparison_operator = "GreaterThanOrEqualToThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = [var.topico_alarmes_arn]
  ok_actions          = [var.topico_alarmes_arn]
}
