#!/usr/bin/env bash
# The ONNX operator suite on a case-insensitive file system, as on macOS (APFS) and
# Windows (NTFS) by default: the data dir, artifact store and zoo cache live on an exFAT
# image mounted through FUSE. onnx ships test_elu (generated) and test_ELU
# (pytorch-converted), so their folders must not collide there while both case ids keep
# their case. Runs collection, then a small offline smoke run that includes those pairs.
#
# Needs root (loop device, mount) and /dev/fuse. Anything missing is an error, never a
# silent skip; set IREE_CONFORMANCE_SKIP_CASE_INSENSITIVE=1 to opt out explicitly.
# Usage: .ci/case_insensitive_lane.sh   (from an activated environment with the project)
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "case-insensitive lane: ERROR: $*" >&2; exit 1; }

if [[ "${IREE_CONFORMANCE_SKIP_CASE_INSENSITIVE:-}" == 1 ]]; then
  echo "case-insensitive lane: NOT RUN (IREE_CONFORMANCE_SKIP_CASE_INSENSITIVE=1)"
  exit 0
fi
[[ $EUID -eq 0 ]] || fail "needs root to attach a loop device and mount exFAT; run as root, or set IREE_CONFORMANCE_SKIP_CASE_INSENSITIVE=1 to skip it"
[[ -c /dev/fuse ]] || fail "/dev/fuse is missing (a container needs --device /dev/fuse); or set IREE_CONFORMANCE_SKIP_CASE_INSENSITIVE=1"
if ! command -v mount.exfat-fuse >/dev/null || ! command -v mkfs.exfat >/dev/null; then
  apt-get update -qq && apt-get install -y -qq exfat-fuse exfatprogs >/dev/null \
    || fail "cannot install exfat-fuse and exfatprogs with apt-get"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ci-exfat.XXXXXX")
mnt="$work/mnt"
loop=""
cleanup() {
  if mountpoint -q "$mnt" 2>/dev/null; then
    umount "$mnt" || umount -l "$mnt" || echo "case-insensitive lane: cannot unmount $mnt" >&2
  fi
  if [[ -n "$loop" ]]; then
    losetup -d "$loop" || echo "case-insensitive lane: cannot detach $loop" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT

truncate -s 1G "$work/exfat.img"
mkfs.exfat "$work/exfat.img" >/dev/null || fail "mkfs.exfat failed on $work/exfat.img"
loop=$(losetup -f --show "$work/exfat.img") || fail "cannot attach a loop device (losetup -f)"
mkdir "$mnt"
mount.exfat-fuse "$loop" "$mnt" || fail "cannot mount $loop on $mnt with mount.exfat-fuse"

# The lane proves nothing unless the mount really folds case.
touch "$mnt/CaseProbe"
[[ -e "$mnt/caseprobe" ]] || fail "$mnt is case-sensitive; the lane would prove nothing"
rm "$mnt/CaseProbe"
echo "case-insensitive lane: exFAT on $loop at $mnt (case-insensitive: checked)"

export IREE_CONFORMANCE_DATA="$mnt/data"
export IREE_CONFORMANCE_STORE="$mnt/store"
export IREE_CONFORMANCE_ZOO_CACHE="$mnt/zoo"

echo "== case-insensitive: collection (-m onnx_ops)"
pytest conformance --collect-only -q -m onnx_ops -p no:cacheprovider >"$work/collect.txt" \
  || { tail -30 "$work/collect.txt"; fail "collection failed on the case-insensitive mount"; }
tail -1 "$work/collect.txt"
for id in test_elu test_ELU test_relu test_ReLU; do
  grep -q ":onnx-ops/$id\]" "$work/collect.txt" || fail "collection lacks onnx-ops/$id"
done

echo "== case-insensitive: smoke run (sample of 20, then the case-folded pairs)"
pytest conformance -m onnx_ops --offline --onnx-ops-sample 20 -n 2 -q -p no:cacheprovider
cat >"$work/cases.txt" <<'EOF'
onnx-ops/test_elu
onnx-ops/test_ELU
onnx-ops/test_relu
onnx-ops/test_ReLU
onnx-ops/test_tanh
onnx-ops/test_Tanh
onnx-ops/test_leakyrelu
onnx-ops/test_LeakyReLU
EOF
pytest conformance -m onnx_ops --offline -n 2 -q -p no:cacheprovider \
  --cases-file "$work/cases.txt" --report-json "$mnt/results.json"
python - "$mnt/results.json" "$work/cases.txt" <<'EOF'
import json, sys
outcomes = json.load(open(sys.argv[1], encoding="utf-8"))["outcomes"]
wanted = {line.strip() for line in open(sys.argv[2]) if line.strip()}
got = {o["case_id"]: o for o in outcomes}
missing = sorted(wanted - got.keys())
if missing:
    sys.exit(f"case-insensitive lane: no outcome for {missing}")
for case_id in sorted(wanted):
    o = got[case_id]
    print(f"  {case_id}: {o['status']} at {o['stage']}")
    if o["status"] in ("error", "crash"):
        sys.exit(f"case-insensitive lane: {case_id} ended in {o['status']}")
EOF
echo "case-insensitive lane: passed"
