cmake -S . -B build-gpu -DGPUWATCH_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo > $OUT/cmake.log 2>&1 || { tail -30 $OUT/cmake.log; exit 1; }
cmake --build build-gpu -j16 > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
R=/tmp/runs
OUT=$R timeout 330 bash examples/pytorch/run_all.sh build-gpu/tools/gpuwatch > $OUT/runs.table 2> $OUT/runs.err
echo "run_all rc=$?"
cat $OUT/runs.table
for d in $R/*/; do n=$(basename $d); build-gpu/tools/gpuwatch analyze $d > $R/$n.txt 2>&1; done
rm -rf $R/*/
tar czf $OUT/runs.tgz -C /tmp runs
ls -la $OUT
