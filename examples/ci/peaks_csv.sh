# The peak of five runs, appended to peaks.csv as run,MiB (qprof peak -- CMD prints the peak alone):
for run in 1 2 3 4 5; do echo "$run,$(qprof peak -- python3 examples/calibrate.py | cut -d' ' -f1)"; done >> peaks.csv
