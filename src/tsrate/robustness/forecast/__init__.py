"""Forecasting a study: partitions (system x ticker x perturbation), batches, workers."""
