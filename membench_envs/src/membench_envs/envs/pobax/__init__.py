"""POBAX (Tao et al., "Benchmarking Partial Observability in RL with a Suite of Memory-Improvable Domains"): its
tasks in numpy."""
