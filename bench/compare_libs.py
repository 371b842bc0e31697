"""compare_libs.py — the libraries bench/compare measures: how to build each benchmark
binary, how to launch it at P ranks, and which algorithms can be forced.  This file has
collie and the MPIs from Debian; compare_pypi.py the peers installed from PyPI wheels
(Open MPI 5, MPICH 5, Intel MPI, oneCCL).

Every library runs the same timing loop (tools/bench_time.c of collie-bench for collie,
bench/mpi_coll_bench.c for the others: warm-up, rank 0 calibrates ~100 ms of calls, then
each call timed alone after a barrier (--barrier-each; or, with --timing loop,
back-to-back calls after one barrier), the slowest rank's mean per call) and prints the
same columns.  With fresh data (--fresh-data) every call's input is rewritten with new
values before its barrier, untimed.  A "config" is "auto" (the library's own choice) or
one forced algorithm:

  Open MPI 4.1, 5.0  --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_<coll>_algorithm N
  MPICH 4.0     MPIR_CVAR_<COLL>_INTRA_ALGORITHM=name, MPIR_CVAR_DEVICE_COLLECTIVES=none
  MPICH 5.0     the same, and MPIR_CVAR_<COLL>_POSIX_INTRA_ALGORITHM=name (posix_name)
  Intel MPI     I_MPI_ADJUST_<COLL>=N (numbers as in Intel's reference; Intel MPI does not
                report whether it applied a number or fell back to its own choice, so a
                config's name says what was asked for)
  oneCCL        CCL_<COLL>=name (allgather: CCL_ALLGATHERV, reduce_scatter_block:
                CCL_REDUCE_SCATTER)

The collectives: allreduce, reduce, bcast, and allgather, reduce_scatter_block, alltoall
(MPI_Allgather, MPI_Reduce_scatter_block, MPI_Alltoall; collie-bench's allgather,
reduce_scatter and alltoall), their sizes per block (one rank's part) as in collie-bench.
"""
import os
import shutil
import subprocess

# Open MPI 4.1.4 coll/tuned algorithm numbers (ompi_info --param coll tuned --level 9).
OPENMPI_FORCED = {
    "allreduce": {1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
                  5: "segmented_ring", 6: "rabenseifner"},
    "bcast": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_binary_tree",
              5: "binary_tree", 6: "binomial", 7: "knomial", 8: "scatter_allgather",
              9: "scatter_allgather_ring"},
    "reduce": {1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial",
               6: "in-order_binary", 7: "rabenseifner"},
    "allgather": {1: "linear", 2: "bruck", 3: "recursive_doubling", 4: "ring", 5: "neighbor",
                  6: "two_proc"},
    "reduce_scatter_block": {1: "basic_linear", 2: "recursive_doubling", 3: "recursive_halving",
                             4: "butterfly"},
    "alltoall": {1: "linear", 2: "pairwise", 3: "modified_bruck", 4: "linear_sync", 5: "two_proc"},
}

# MPICH 4.0.2 intra-communicator algorithms (the CVAR descriptions in libmpich), without
# "nb" (the nonblocking algorithm waited on) and "auto".
MPICH_FORCED = {
    "allreduce": ["recursive_doubling", "reduce_scatter_allgather", "smp"],
    "bcast": ["binomial", "scatter_recursive_doubling_allgather", "scatter_ring_allgather", "smp"],
    "reduce": ["binomial", "reduce_scatter_gather", "smp"],
    "allgather": ["brucks", "recursive_doubling", "ring"],
    "reduce_scatter_block": ["noncommutative", "recursive_doubling", "pairwise",
                             "recursive_halving"],
    "alltoall": ["brucks", "pairwise", "scattered"],   # pairwise_sendrecv_replace: in place only
}

# Intel MPI 2021 I_MPI_ADJUST_<COLL> values (Intel MPI Developer Reference, "I_MPI_ADJUST
# family"): names for the numbers used here.
INTEL_FORCED = {
    "allreduce": {1: "recursive_doubling", 2: "rabenseifner", 3: "reduce_bcast",
                  4: "topo_reduce_bcast", 5: "binomial_gather_scatter",
                  6: "topo_binomial_gather_scatter", 7: "shumilin_ring", 8: "ring",
                  9: "knomial", 10: "topo_shm_flat", 11: "topo_shm_knomial",
                  12: "topo_shm_knary"},
    "bcast": {1: "binomial", 2: "recursive_doubling_allgather", 3: "ring_allgather",
              4: "topo_binomial", 5: "topo_recursive_doubling", 6: "topo_ring",
              7: "shumilin", 8: "knomial", 9: "topo_shm_flat", 10: "topo_shm_knomial",
              11: "topo_shm_knary"},
    "reduce": {1: "shumilin", 2: "binomial", 3: "topo_shumilin", 4: "topo_binomial",
               5: "rabenseifner", 6: "topo_rabenseifner", 7: "knomial", 8: "topo_shm_flat",
               9: "topo_shm_knomial", 10: "topo_shm_knary", 11: "topo_shm_binomial"},
    "allgather": {1: "recursive_doubling", 2: "bruck", 3: "ring", 4: "topo_gatherv_bcast",
                  5: "knomial"},
    "reduce_scatter_block": {1: "recursive_halving", 2: "pairwise", 3: "recursive_doubling",
                             4: "reduce_scatter", 5: "topo_reduce_scatter"},
    "alltoall": {1: "bruck", 2: "isend_irecv_waitall", 3: "pairwise", 4: "plum"},
}

# The forced algorithms measured first (and kept by bench/compare --max-forced N): the
# ones that were fastest somewhere on this machine (docs/performance.md); the rest follow.
# For allgather, reduce_scatter_block and alltoall: the fastest at 8 B and 64 KiB in a
# first P = 2 pass of every forced algorithm (2026-11-25, a loaded machine).
OPENMPI_FIRST = {"allreduce": ["ring", "rabenseifner", "recursive_doubling", "segmented_ring"],
                 "bcast": ["pipeline", "scatter_allgather_ring", "binomial", "split_binary_tree"],
                 "reduce": ["pipeline", "binomial", "rabenseifner", "in-order_binary"],
                 "allgather": ["recursive_doubling", "two_proc", "sparbit", "ring", "bruck"],
                 "reduce_scatter_block": ["recursive_halving", "butterfly", "recursive_doubling"],
                 "alltoall": ["pairwise", "modified_bruck", "linear_sync", "two_proc"]}
MPICH_FIRST = {"allgather": ["recursive_doubling", "brucks", "ring"],
               "reduce_scatter_block": ["noncommutative", "recursive_halving", "pairwise"],
               "alltoall": ["pairwise", "brucks", "scattered"]}
INTEL_FIRST = {"allreduce": ["ring", "rabenseifner", "topo_shm_flat", "recursive_doubling"],
               "bcast": ["topo_binomial", "topo_shm_flat", "binomial", "ring_allgather"],
               "reduce": ["topo_shm_flat", "binomial", "rabenseifner", "shumilin"],
               "allgather": ["recursive_doubling", "knomial", "ring"],
               "reduce_scatter_block": ["reduce_scatter", "topo_reduce_scatter",
                                        "recursive_halving"],
               "alltoall": ["bruck", "isend_irecv_waitall", "pairwise"]}

MPI_SOURCE = "bench/mpi_coll_bench.c"


class Library:
    """One library: name, launcher, binary; configs(coll) lists (config, argv extra, env)."""

    name = "?"
    launch_timeout_flag = None
    first = {}              # {coll: [forced config names measured first]}

    def __init__(self, workdir):
        self.workdir = workdir
        self.binary = None
        self.version = ""

    def forced(self, coll):
        return []

    def configs(self, coll, with_forced):
        """auto, then the forced configs, those in self.first[coll] first."""
        first = self.first.get(coll, [])
        forced = sorted(self.forced(coll) if with_forced else [],
                        key=lambda c: first.index(c[0]) if c[0] in first else len(first))
        return [("auto", [], {})] + forced

    barrier_each = True     # timing: a barrier before every timed call (bench/compare --timing)
    release_each = False    # timing: rank 0's release instead of the barrier (--timing release)
    fresh_data = False      # new input before every call (set by bench/compare per launch)
    use_result = False      # the result read after every call, timed (--use-result)
    check = False           # verify results against the exact expected values (--check)

    def bench_args(self, coll, seg, iters):
        lo, hi, factor = seg
        args = ["--coll", coll, "--min-bytes", str(lo), "--max-bytes", str(hi),
                "--step-factor", str(factor)]
        return args + (["--iters", str(iters)] if iters else []) + self.timing_args()

    def timing_args(self):
        return ["--barrier-each", "1" if self.barrier_each else "0"] + \
            (["--release-each", "1"] if self.release_each else []) + \
            (["--fresh-data", "1"] if self.fresh_data else []) + \
            (["--use-result", "1"] if self.use_result else []) + \
            (["--check", "1"] if self.check else [])


# collie-bench's names of the collectives measured under another name here
COLLIE_NAMES = {"reduce_scatter_block": "reduce_scatter"}


class Collie(Library):
    """collie-bench under collie-run in three variants ("configs"): auto with malloc'd
    buffers, with buffers from collie_alloc, and with malloc'd buffers under the shared
    heap (collie-run with COLLIE_SHARED_HEAP=1: libcollie_heap.so preloaded, so large
    malloc blocks come from memory the peers map; left out when the library is not built)."""

    name = "collie"

    def __init__(self, workdir, build_dir):
        super().__init__(workdir)
        self.run = os.path.join(build_dir, "collie-run")
        self.binary = os.path.join(build_dir, "collie-bench")
        self.heap = os.path.exists(os.path.join(build_dir, "libcollie_heap.so"))

    def prepare(self):
        for f in (self.run, self.binary):
            if not os.access(f, os.X_OK):
                return f"{f} not built (run bash scripts/setup.sh, or pass --build-dir)"
        self.version = "collie (this tree), collie-bench --mode blocking --algo auto"
        return None

    def timing_args(self):
        return (["--barrier-each"] if self.barrier_each else []) + \
            (["--release-each"] if self.release_each else []) + \
            (["--fresh-data"] if self.fresh_data else []) + \
            (["--use-result"] if self.use_result else []) + (["--check"] if self.check else [])

    def configs(self, coll, with_forced):
        # auto with the user's (malloc'd) buffers, with buffers from collie_alloc
        # (registered memory: large messages can skip a copy), and under the shared heap
        off = {"COLLIE_SHARED_HEAP": "0"}
        heap = [("shared_heap", [], {"COLLIE_SHARED_HEAP": "1"})] if self.heap else []
        return [("auto", [], off), ("collie_alloc", ["--collie-alloc"], off)] + heap

    def command(self, nprocs, coll, config, seg, iters, limit):
        # collie-run's own timeout a little above ours, so ours decides and rows survive
        return [self.run, "-n", str(nprocs), "--timeout", str(int(limit) + 30), "--",
                self.binary, "--mode", "blocking", "--algo", "auto"] + config[1] + \
            self.bench_args(COLLIE_NAMES.get(coll, coll), seg, iters), dict(config[2])


def compile_mpi_bench(mpicc, out, link_dir=None):
    """Builds bench/mpi_coll_bench.c with mpicc; with link_dir, compiles with mpicc but
    links against link_dir/libmpi.so (same MPICH ABI).  Returns an error text or None."""
    if not shutil.which(mpicc):
        return f"{mpicc} not found (install with WITH_MPI=1 bash scripts/setup.sh)"
    cmd = [mpicc, "-O2", "-o", out, MPI_SOURCE]
    if link_dir:
        obj = out + ".o"
        res = subprocess.run([mpicc, "-O2", "-c", "-o", obj, MPI_SOURCE],
                             capture_output=True, text=True)
        if res.returncode != 0:
            return f"{mpicc} -c failed: {res.stderr.strip()[-400:]}"
        cmd = ["cc", "-o", out, obj, f"-L{link_dir}", "-lmpi", f"-Wl,-rpath,{link_dir}"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    return None if res.returncode == 0 else f"{' '.join(cmd)} failed: {res.stderr.strip()[-400:]}"


class OpenMPI(Library):
    name = "openmpi"
    first = OPENMPI_FIRST
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

    def prepare(self):
        self.binary = os.path.join(self.workdir, "mpi_coll_bench_openmpi")
        return compile_mpi_bench("mpicc.openmpi", self.binary)

    def forced(self, coll):
        out = []
        for num, alg in OPENMPI_FORCED[coll].items():
            mca = ["--mca", "coll_tuned_use_dynamic_rules", "1",
                   "--mca", f"coll_tuned_{coll}_algorithm", str(num)]
            out.append((alg, mca, {}))
        return out

    def command(self, nprocs, coll, config, seg, iters, limit):
        _, mca, env = config
        return ["mpirun.openmpi", "-np", str(nprocs), "--oversubscribe", "--bind-to", "none"] + \
            mca + [self.binary] + self.bench_args(coll, seg, iters), dict(self.env, **env)


class MPICH(Library):
    name = "mpich"
    first = MPICH_FIRST

    def prepare(self):
        self.binary = os.path.join(self.workdir, "mpi_coll_bench_mpich")
        return compile_mpi_bench("mpicc.mpich", self.binary)

    def forced(self, coll):
        var = f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM"
        return [(alg, [], {var: alg, "MPIR_CVAR_DEVICE_COLLECTIVES": "none"})
                for alg in MPICH_FORCED[coll]]

    def command(self, nprocs, coll, config, seg, iters, limit):
        return ["mpirun.mpich", "-np", str(nprocs), self.binary] + \
            self.bench_args(coll, seg, iters), dict(config[2])
