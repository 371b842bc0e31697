"""compare_summary.py — bench/compare's tables: the best time of every library
configuration per point (per state of the machine, compare_state.py), the best peer (the
fastest run of any peer's auto or forced algorithms) and collie's ratios to it.

compare.csv rows (RAW_COLUMNS) come from bench/compare's Runner; summarize() gives the
records of summary.csv (SUMMARY_COLUMNS), print_table() the table bench/compare prints.
"""
import compare_rematch
import compare_state

COLLS = ("allreduce", "reduce", "bcast", "allgather", "reduce_scatter_block", "alltoall")
PEERS = ("openmpi", "mpich", "intelmpi", "openmpi5", "mpich5", "oneccl")
DATA = ("reused", "fresh")
RAW_COLUMNS = ["coll", "P", "bytes", "data", "library", "config", "rep", "status", "us",
               "iters", "algorithm", "line_ns_before", "line_ns_after"]
SUMMARY_COLUMNS = ["coll", "P", "bytes", "data", "collie_us", "collie_algorithm",
                   "collie_alloc_us", "collie_heap_us"] + \
    [f"{p}_{c}" for p in PEERS for c in ("auto_us", "forced_us", "forced_algorithm")] + \
    ["best_peer", "best_peer_config", "best_peer_us", "ratio", "ratio_collie_alloc",
     "ratio_shared_heap", "best_peer_state", "state_matched", "line_split_ns"] + \
    compare_rematch.PAIRED_COLUMNS


def split_of_rows(rows):
    """The split between the machine's states over the probes of compare.csv rows."""
    return compare_state.split_of([v for r in rows for v in r[11:13]])


def best_of(rows, split):
    """{(coll, P, bytes, data, library, config): {state: (best us, algorithm)}} over
    repetitions, per state of the machine (compare_state.py; one state "" without split).
    The paired rematch's rows (compare_rematch.py) are left out."""
    best = {}
    for row in rows:
        coll, nprocs, size, data, lib, config, rep, status, us, _iters, alg = row[:11]
        if compare_rematch.is_rematch(rep):
            continue
        state = compare_state.state_of(row[11], row[12], split)
        per = best.setdefault((coll, nprocs, size, data, lib, config), {})
        if status == "ok" and (state not in per or us < per[state][0]):
            per[state] = (us, alg)
    return {k: v for k, v in best.items() if v}


def overall(per_state):
    """The best (us, algorithm, state) of any state, or None.  Launches during which the
    state changed ("mixed") count only when there is nothing else."""
    clean = compare_state.without_mixed(per_state)
    return min((v + (s,) for s, v in clean.items()), default=None)


def peer_top(best, point):
    """The best peer of a point: (us, peer, config, state) — the fastest run of any peer's
    auto or forced algorithms, in any state; a configuration's runs during which the state
    changed ("mixed") count only when it has no other — or None."""
    runs = []
    for k, per in best.items():
        if k[:4] == point and k[4] in PEERS:
            clean = compare_state.without_mixed(per)
            runs += [(v[0], k[4], k[5], s) for s, v in clean.items()]
    return min(runs) if runs else None


def ratio_of(mine, peer_us):
    """mine's time / the best peer's, to 4 significant digits ("" when either is missing)."""
    return float(f"{mine[0] / peer_us:.4g}") if mine and peer_us else ""


def summarize(rows):
    """One record per point (SUMMARY_COLUMNS): collie's times, each peer's best auto and
    forced, the best peer, the ratios, the machine's state behind them, and the paired
    rematch's rounds and ratio where there was one."""
    split = split_of_rows(rows)
    best = best_of(rows, split)
    points = sorted({(r[0], r[1], r[2], r[3]) for r in rows},
                    key=lambda k: (COLLS.index(k[0]), k[1], k[2], DATA.index(k[3])))
    table = []
    for point in points:
        coll, nprocs, size, data = point
        top = peer_top(best, point)
        state = top[3] if top else ""
        mine, matched = compare_state.matched_best(best.get(point + ("collie", "auto"), {}), state)
        rec = {"coll": coll, "P": nprocs, "bytes": size, "data": data,
               "collie_us": mine[0] if mine else "", "collie_algorithm": mine[1] if mine else "",
               "best_peer_state": state, "state_matched": matched,
               "line_split_ns": f"{split:.0f}" if split else ""}
        alloc = compare_state.matched_best(best.get(point + ("collie", "collie_alloc"), {}), state)[0]
        rec["collie_alloc_us"] = alloc[0] if alloc else ""
        heap = compare_state.matched_best(best.get(point + ("collie", "shared_heap"), {}), state)[0]
        rec["collie_heap_us"] = heap[0] if heap else ""
        for peer in PEERS:
            auto = overall(best.get(point + (peer, "auto"), {}))
            forced = [overall(v)[:1] + (k[5],) for k, v in best.items()
                      if k[:5] == point + (peer,) and k[5] != "auto"]
            fbest = min(forced) if forced else None
            rec[f"{peer}_auto_us"] = auto[0] if auto else ""
            rec[f"{peer}_forced_us"] = fbest[0] if fbest else ""
            rec[f"{peer}_forced_algorithm"] = fbest[1] if fbest else ""
        rec["best_peer"] = top[1] if top else ""
        rec["best_peer_config"] = top[2] if top else ""
        rec["best_peer_us"] = top[0] if top else ""
        peer_us = top[0] if top and top[0] > 0 else None
        rec["ratio"] = ratio_of(mine, peer_us)
        rec["ratio_collie_alloc"] = ratio_of(alloc, peer_us)
        rec["ratio_shared_heap"] = ratio_of(heap, peer_us)
        table.append(rec)
    return compare_rematch.add_columns(table, rows)


def human(size):
    for unit, shift in (("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return str(size)


def fmt(us):
    return "-" if us == "" else (f"{us:.2f}" if us < 100 else f"{us:.0f}")


def print_table(a, table, libs):
    """Per point and data mode: collie, collie_alloc, each peer's best config (auto or
    forced; summary.csv has both), the ratio to the best peer and which peer that is."""
    peers = [lib.name for lib in libs if lib.name != "collie"]
    timing = {"barrier": "each call after a barrier", "release": "each call after rank 0's release",
              "loop": "back-to-back calls"}[a.timing]
    if getattr(a, "use_result", False):
        timing += ", then every rank's read of its result"
    print(f"# collie / best peer: µs per call ({timing}), the slowest rank's mean, best of the")
    print(f"# {a.reps} repetition(s) (forced algorithms: {a.forced_reps}); float64 sum, root 0;")
    print("# data reused: the same buffers every call; fresh: new input before every call")
    print("# each peer: the best of its auto and forced algorithms; ratio = collie / best peer")
    print("# (< 1: collie is faster); c_alloc / r_alloc: collie with buffers from collie_alloc;")
    print("# c_heap / r_heap: collie with malloc buffers under the shared heap (libcollie_heap.so)")
    print("# paired: with --rematch, the median over its rounds of collie / the best peer, the two")
    print("# launched one right after the other (compare_rematch.py)")
    w = max([9] + [len(c) for c in a.colls])   # the longest collective's name
    head = f"{'coll':{w}} {'P':>2} {'bytes':>6} {'data':6} {'collie':>8} {'algorithm':16} " \
           f"{'c_alloc':>8} {'c_heap':>8}"
    for peer in peers:
        head += f" {peer:>9}"
    print(head + f" {'ratio':>6} {'paired':>6} {'r_alloc':>7} {'r_heap':>6}  best peer")
    for r in table:
        line = f"{r['coll']:{w}} {r['P']:>2} {human(r['bytes']):>6} {r['data']:6} " \
               f"{fmt(r['collie_us']):>8} {r['collie_algorithm'][:16]:16} " \
               f"{fmt(r['collie_alloc_us']):>8} {fmt(r['collie_heap_us']):>8}"
        for peer in peers:
            got = [x for x in (r[f"{peer}_auto_us"], r[f"{peer}_forced_us"]) if x != ""]
            line += f" {fmt(min(got) if got else ''):>9}"
        ratio = "-" if r["ratio"] == "" else f"{r['ratio']:.2f}"
        r_alloc = "-" if r["ratio_collie_alloc"] == "" else f"{r['ratio_collie_alloc']:.2f}"
        r_heap = "-" if r["ratio_shared_heap"] == "" else f"{r['ratio_shared_heap']:.2f}"
        pair = "-" if r["rematch_ratio"] == "" else f"{r['rematch_ratio']:.2f}"
        print(line + f" {ratio:>6} {pair:>6} {r_alloc:>7} {r_heap:>6}  "
                     f"{r['best_peer']} {r['best_peer_config']}")
    for data in a.data:
        ratios = [r["ratio"] for r in table if r["ratio"] != "" and r["data"] == data]
        if ratios:
            wins = sum(1 for x in ratios if x <= 1.0)
            print(f"# {data} data: {len(ratios)} points with a peer: collie at or below the best "
                  f"peer at {wins}; worst ratio {max(ratios):.2f}, best {min(ratios):.2f}")
        paired = [r["rematch_ratio"] for r in table if r["rematch_ratio"] != "" and r["data"] == data]
        if paired:
            print(f"# {data} data, paired rematch: {len(paired)} points timed again side by side; "
                  f"collie at or below its best peer at {sum(1 for x in paired if x <= 1.0)} of "
                  f"them; worst {max(paired):.2f}, best {min(paired):.2f}")
