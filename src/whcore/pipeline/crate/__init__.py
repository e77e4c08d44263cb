"""A finished run as one validated Workflow Run RO-Crate: bundle it, open one from anyone within
bounds, check it against its own metadata, and render its figures and claims again."""
