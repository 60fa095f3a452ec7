"""The statistics, as plain functions: t-tests and WRS, causal estimates (confounder
distributions, treatment assignment, propensity matching, effects), L-level ratings, and the
block bootstrap behind every rating's stability."""
