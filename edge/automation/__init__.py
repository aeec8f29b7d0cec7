"""Automation: schedules, rules and alerts that act through the security policy."""
