"""Operator models (FLOPs and compulsory bytes from a shape) and shape sweeps."""
