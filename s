  seed 23 (cupti): fragmentation predicted 3.3 ms, measured 2.0 ms (0.62, 1 run1)
