"""What the systems receive: forecast windows, the paper's numeric perturbations (P1-P3), the
image inputs and their perturbations (P4-P6), and the P6 sentiment labels."""
