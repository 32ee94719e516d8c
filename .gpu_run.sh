set -x
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import torch; print(torch.__version__, torch.cuda.is_available())"
dpkg -s libyajl-dev >/dev/null 2>&1 && echo yajl yes || echo yajl no
cmake -S . -B build-gpu -DGPUWATCH_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo > $OUT/cmake.log 2>&1 || { tail -30 $OUT/cmake.log; exit 1; }
cmake --build build-gpu -j16 > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
OUT_RUNS=$OUT/runs
OUT=$OUT_RUNS timeout 330 bash examples/pytorch/run_all.sh build-gpu/tools/gpuwatch > $OUT_RUNS.table 2> $OUT_RUNS.err
echo "run_all rc=$?"
cat $OUT_RUNS.table
rm -rf $OUT_RUNS/*/ 2>/dev/null
ls $OUT_RUNS | head -50
