"""A finished run as a validated RO-Crate: bundle, open safely, check, and render its figures again."""
