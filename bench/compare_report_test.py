"""compare_report_test.py — ctest bench.compare_report: issue 14's target table of
compare_report.py (target_rows) on made-up summary rows, each expected value worked out by
hand:
  - 10 points (5 sizes x reused / fresh): 9 at or below the best peer is 90 %, met; one
    more above 1.0 is not;
  - a point above 1.3 x is named and fails "never above 1.3 x"; 1.3 itself does not;
  - the paired view takes rematch_ratio and falls back on the first pass's ratio where a
    point had no rematch;
  - the mapped target counts a point from 512 KiB when collie_alloc or the shared heap is
    at most 0.6 x (the better of the two), and ignores smaller points;
  - P = 2 allreduce 2 MiB and bcast 2 / 8 MiB: shown reused / fresh, met only when both are.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_report  # noqa: E402


def check(what, got, want):
    if got != want:
        sys.exit(f"compare_report_test: {what}: got {got!r}, want {want!r}")


def point(coll, size, data, ratio, paired="", alloc="", heap=""):
    return {"coll": coll, "P": "2", "bytes": str(size), "data": data, "ratio": str(ratio),
            "rematch_ratio": str(paired), "ratio_collie_alloc": str(alloc),
            "ratio_shared_heap": str(heap)}


def table_of(rows):
    return {(r["coll"], int(r["P"]), int(r["bytes"]), r["data"]): r for r in rows}


def rows_by_target(table, column):
    return {what.split(" (")[0]: (value, met) for what, value, met in
            compare_report.target_rows(table, column)}


def main():
    mib = 1 << 20
    rows = [point("allreduce", 8, "reused", 0.9, paired=1.2),
            point("allreduce", 8, "fresh", 1.3),                  # no rematch: 1.3 both views
            point("allreduce", 2 * mib, "reused", 0.80, paired=0.86, alloc=0.7, heap=0.5),
            point("allreduce", 2 * mib, "fresh", 0.85, alloc=0.61, heap=0.65),
            point("bcast", 2 * mib, "reused", 1.0, alloc=0.6),
            point("bcast", 2 * mib, "fresh", 0.5, alloc=0.4),
            point("bcast", 8 * mib, "reused", 0.7, alloc=0.3),
            point("bcast", 8 * mib, "fresh", 0.7, alloc=0.3),
            point("reduce", 4096, "reused", 0.2, alloc=0.9),       # below 512 KiB: not counted
            point("reduce", 4096, "fresh", 0.95)]
    first = rows_by_target(table_of(rows), "ratio")
    check("share met at 9 of 10", first["≤ 1.0 × the best peer at ≥ 90% of points"],
          ("9 of 10 (90%)", True))
    check("1.3 is not above 1.3", first["never above 1.3 ×"], ("none", True))
    check("mapped: the better of collie_alloc and the heap",
          first["collie_alloc or shared heap ≤ 0.6 × from 512 KiB"], ("5 of 6", False))
    check("allreduce 2 MiB", first["P = 2 allreduce 2 MiB ≤ 0.85 ×"], ("0.80 / 0.85", True))
    check("bcast 2 MiB", first["P = 2 bcast 2 MiB ≤ 1.0 ×"], ("1.00 / 0.50", True))
    check("bcast 8 MiB", first["P = 2 bcast 8 MiB ≤ 1.0 ×"], ("0.70 / 0.70", True))

    paired = rows_by_target(table_of(rows), "rematch_ratio")
    check("paired share", paired["≤ 1.0 × the best peer at ≥ 90% of points"],
          ("8 of 10 (80%)", False))
    check("paired above 1.3", paired["never above 1.3 ×"], ("none", True))
    check("paired allreduce 2 MiB", paired["P = 2 allreduce 2 MiB ≤ 0.85 ×"],
          ("0.86 / 0.85", False))

    rows.append(point("reduce", 8, "fresh", 1.31))
    worse = rows_by_target(table_of(rows), "ratio")
    check("above 1.3 named", worse["never above 1.3 ×"], ("reduce P=2 8 B fresh 1.31", False))
    check("9 of 11 is below 90 %", worse["≤ 1.0 × the best peer at ≥ 90% of points"],
          ("9 of 11 (82%)", False))
    print("compare_report_test: ok")


if __name__ == "__main__":
    main()
