"""Which collie library collie.init() loads: the packaged libcollie.so, or — when mpi4py.MPI
is imported, or under an MPI launcher (mpirun/mpiexec) — libcollie_mpi.so of that MPI
(its world is MPI_COMM_WORLD).  collie-run's ranks (COLLIE_JOB) always use
libcollie.so.  COLLIE_PY_LIBRARY forces a path."""
import ctypes
import os
import sys

from ._errors import CollieError

LIBDIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib")
_OMPI_VARS = ("OMPI_COMM_WORLD_SIZE",)
_PMI_VARS = ("PMI_SIZE", "PMI_RANK", "HYDRA_CONTROL_FD")


def _flavour_of_mpi4py():
    """The flavour of the MPI the imported mpi4py.MPI runs on."""
    MPI = sys.modules["mpi4py.MPI"]
    text = MPI.Get_library_version()
    if "Open MPI" in text:
        return "openmpi"
    if "MPICH" in text:
        return "mpich"
    raise CollieError("collie: mpi4py uses an MPI collie has no drop-in for: %s"
                      % text.splitlines()[0], -5)


def _flavour_of_launcher():
    if any(v in os.environ for v in _OMPI_VARS):
        return "openmpi"
    if any(v in os.environ for v in _PMI_VARS):
        return "mpich"
    return None


def mpi_flavour():
    """"openmpi", "mpich" or None (not an MPI run).  The MPI already in the process (an
    imported mpi4py.MPI) decides; else the launcher's environment (libcollie_mpi then
    initialises MPI itself)."""
    if "COLLIE_JOB" in os.environ:
        return None
    if "mpi4py.MPI" in sys.modules:
        return _flavour_of_mpi4py()
    return _flavour_of_launcher()


def choose():
    forced = os.environ.get("COLLIE_PY_LIBRARY")
    if forced:
        return forced
    flavour = mpi_flavour()
    if flavour is None:
        return os.path.join(LIBDIR, "libcollie.so")
    path = os.path.join(LIBDIR, flavour, "libcollie_mpi.so")
    if not os.path.exists(path):
        raise CollieError("collie: this is an MPI run (%s) but the package was built without "
                          "libcollie_mpi for %s (was mpicc.%s installed when it was built?)"
                          % (flavour, flavour, flavour), -5)
    return path


def collie_run_binary():
    return os.path.join(LIBDIR, "collie-run")


# MPICH's ABI (libmpich.so.12 on Debian, libmpi.so.12 of MPICH 5 and Intel MPI).
_MPICH_ABI_LIBS = ("libmpich.so.12", "libmpi.so.12")


def bind_mpi(path):
    """libcollie_mpi.so for MPICH's ABI is not linked to an MPI library (one build serves
    every implementation of the ABI): its MPI symbols bind to the MPI already in the
    process.  Without LD_PRELOAD nor mpi4py that MPI must be loaded first, and globally;
    an MPI loaded privately (mpi4py's extension module) is made global the same way."""
    if os.path.basename(os.path.dirname(path)) != "mpich":
        return
    if hasattr(ctypes.CDLL(None), "PMPI_Init"):
        return
    for name in _MPICH_ABI_LIBS:
        try:
            ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
            return
        except OSError:
            continue
    raise CollieError("collie: %s needs an MPI library of MPICH's ABI (%s) and none loads"
                      % (path, " or ".join(_MPICH_ABI_LIBS)), -5)
