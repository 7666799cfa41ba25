#!/bin/bash
# Device call 1 of 2026-12-01/02 (issue 35): the probe stripes_probe.cu, a standalone program (not
# part of the build) that asks whether column stripes beat one CSR pass where x misses the L2, and
# what an ideal order (its path order) would give a k-mer graph. Its output: output.txt.
nvcc -O3 -std=c++17 -arch=sm_90 stripes_probe.cu -lcusparse -o stripes && nvidia-smi -L && ./stripes
