#!/usr/bin/env bash
# Check that a plain loop over each cpu_math.h function auto-vectorizes, per ISA (dev tool).
#   bash tools/vec_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(mktemp --suffix=.c)
trap 'rm -f "$src" "${src%.c}.o"' EXIT
{
    echo '#include "cpu_math.h"'
    for f in expf exp2f expm1f logf log2f log10f log1pf sinf cosf tanf tanhf sigmoidf erff erfcf \
             sinhf coshf atanf asinf acosf geluf gelu_tanhf siluf; do
        echo "void loop_$f(const float *__restrict__ x, float *__restrict__ o, long n)"
        echo "{ for (long i = 0; i < n; i++) o[i] = tl_$f(x[i]); }"
    done
    echo 'void loop_atan2f(const float *__restrict__ y, const float *__restrict__ x, float *__restrict__ o, long n)'
    echo '{ for (long i = 0; i < n; i++) o[i] = tl_atan2f(y[i], x[i]); }'
    echo 'void loop_softplusf(const float *__restrict__ x, float *__restrict__ o, long n, float b, float t)'
    echo '{ for (long i = 0; i < n; i++) o[i] = tl_softplusf(x[i], b, t); }'
    echo 'void loop_sinf_n(const float *x, float *o, long n) { tl_sinf_n(x, o, n); }'
} > "$src"
for isa in "-mavx512f" "-mavx2" ""; do
    out=$(gcc -O3 $isa -fwrapv -fno-math-errno -Itensorlib/_core/cpu -c "$src" -o "${src%.c}.o" \
          -fopt-info-vec-optimized -fopt-info-vec-missed 2>&1)
    mapfile -t fns < <(grep -o '^void loop_[a-z0-9_]*' "$src" | sed 's/void loop_//')
    ok=(); missed=()
    for i in "${!fns[@]}"; do
        line=$((2 * i + 3))
        if [ "${fns[$i]}" = sinf_n ]; then   # its loops live in cpu_math.h (max pass, CW, full)
            n=$(grep -cE "cpu_math.h:[0-9]+:[0-9]+: optimized: loop vectorized" <<<"$out" || true)
            [ "$n" -ge 3 ] && ok+=(sinf_n) || missed+=(sinf_n)
        elif grep -q ":$line:.*loop vectorized" <<<"$out"; then ok+=("${fns[$i]}"); else missed+=("${fns[$i]}"); fi
    done
    echo "${isa:-baseline}: vectorized ${#ok[@]}/${#fns[@]}${missed:+; not: ${missed[*]}}"
done
