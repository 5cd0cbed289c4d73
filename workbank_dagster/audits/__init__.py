"""User audits: an organisation's own task list (audits/<slug>.csv) met with benchmark coverage."""
