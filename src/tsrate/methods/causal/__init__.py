"""The paper's causal method: confounder distributions, treatment assignment, propensity-score
matching, and the APE / PIE effect estimates."""
