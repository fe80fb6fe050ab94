"""Simulated cluster components, run by one controller-manager thread."""
