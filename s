  seed 100 (cupti): input_pipeline predicted 119.4 ms, measured 126.9 ms (1.06, 1 run1)
