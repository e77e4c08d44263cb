"""What the jobs compute: baselines and their families, a method's grid of configurations, the
ablation, the exact energy by degree, the learned epistasis, ProteinGym's protocol and
leaderboard. Each takes arrays and tables (never a job's spec) and returns tables."""
