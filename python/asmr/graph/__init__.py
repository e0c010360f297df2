"""Building, weighting and pruning the unit graph (CSR arrays)."""
