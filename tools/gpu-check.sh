#!/usr/bin/env bash
# The refit with receivers (and publishers) in VRAM, verified, beside a raw NIXL VRAM READ of the
# same bytes by the same processes in the same run. For a machine with a GPU; a few minutes.
#
# Needs, in the python it is given (PYTHON, default python3): a CUDA build of torch, nixl-cu12 and
# this package (pip install -e '.[refit]'). Writes its reports under OUT (default ./gpu-check).
# Exit 0 only when every step of every run was verified, installed and matched the truth.
set -euo pipefail
PY=${PYTHON:-python3}
OUT=${OUT:-./gpu-check}
DEVICE=${DEVICE:-cuda:0}
BYTES=${BYTES:-1GiB}  # a dry run of this script on a CPU machine: DEVICE=cpu BYTES=8MiB
mkdir -p "$OUT"

[[ $DEVICE == cpu ]] || "$PY" - <<'PY'
import sys
import torch
if not torch.cuda.is_available():
    sys.exit(f"gpu-check: torch {torch.__version__} sees no CUDA device; run this on a GPU machine")
import nixl_cu12  # noqa: F401  (raises if NIXL is missing)
print(f"gpu-check: torch {torch.__version__}, {torch.cuda.device_count()} device(s): "
      f"{torch.cuda.get_device_name(0)}", flush=True)
PY

status=0
run() {  # NAME ARGS...: one refit, its report as OUT/NAME.json
    local name=$1; shift
    echo "== $name: refitwire refit --device $DEVICE $*"
    if ! "$PY" -c "import sys; from refitwire.cli import main; sys.exit(main(sys.argv[1:]))" refit --device "$DEVICE" --raw-reps 3 --json "$OUT/$name.json" "$@" \
        > "$OUT/$name.txt" 2> "$OUT/$name.err"; then
        status=1
    fi
    tail -n 6 "$OUT/$name.txt"
}
run six-tensors --model-bytes "$BYTES" --publishers 1 --receivers 1 --steps 4
run moe-30b-a3b --layout moe-30b-a3b --model-bytes "$BYTES" --publishers 2 --receivers 1 --steps 4
run dense-8b --layout dense-8b --model-bytes "$BYTES" --publishers 2 --receivers 2 --steps 4

"$PY" - "$OUT" <<'PY'
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    r = json.loads(path.read_text())
    warm = r.get("summary", {}).get("warm") or {}
    rows = [x for s in r["steps"] for x in s["receivers"]]
    vram = all(x.get("raw_nixl", {}).get("ok") for x in rows)
    print(f"{path.stem}: ok={r['ok']} rows={len(rows)} raw NIXL READ ok={vram} "
          f"warm wall/xfer={warm.get('median_wall_over_transfer')} of raw={warm.get('median_over_raw')} "
          f"of raw (large descriptors)={warm.get('median_over_contiguous')}")
PY
exit $status
