# benchmarks (filled in by the benchmark work)
