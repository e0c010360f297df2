"""Datasets, metrics, reports."""
