"""The analyses behind the jobs: they take arrays and tables (never a job spec) and return tables."""
