  seed 23 (cupti): fragmentation predicted 3.8 ms, measured 2.8 ms (0.75, 1 run1)
