"""pip install <checkout>: the Python package collie (python/collie, extension python/src).
The build runs this repository's CMake for libcollie.so, collie-run and libcollie_mpi.so
(for each MPI found) and puts them into the package (collie/_lib/); the extension itself
links no collie symbols (it dlopens the library collie.init() chooses).
COLLIE_PY_BUILD_DIR keeps the CMake build directory (incremental rebuilds)."""
import glob
import os
import re
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    text = open(os.path.join(ROOT, "include", "collie.h")).read()
    return re.search(r'#define COLLIE_VERSION_STRING "([^"]+)"', text).group(1)


class BuildCollie(build_ext):
    """build_ext that first builds collie's libraries and collie-run with CMake."""

    def run(self):
        libdir = os.path.join(ROOT, "python", "collie", "_lib") if self.inplace else \
            os.path.join(self.build_lib, "collie", "_lib")
        self.build_collie(libdir)
        super().run()

    def build_collie(self, libdir):
        if shutil.which("cmake") is None:
            raise RuntimeError("collie: building the Python package needs cmake (>= 3.18) "
                               "and a C compiler (Debian: apt-get install cmake build-essential)")
        bdir = os.environ.get("COLLIE_PY_BUILD_DIR") or os.path.join(
            os.path.abspath(self.build_temp), "cmake")
        subprocess.check_call(["cmake", "-S", ROOT, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release",
                               "-DBUILD_TESTING=OFF"], stdout=subprocess.DEVNULL)
        jobs = os.environ.get("COLLIE_PY_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", bdir, "--target", "collie_python_libs",
                               "-j", jobs])
        if os.path.isdir(libdir):
            shutil.rmtree(libdir)
        os.makedirs(libdir)
        shutil.copy2(os.path.realpath(os.path.join(bdir, "libcollie.so")),
                     os.path.join(libdir, "libcollie.so"))
        shutil.copy2(os.path.join(bdir, "collie-run"), os.path.join(libdir, "collie-run"))
        shutil.copy2(os.path.join(bdir, "libcollie_heap.so"), os.path.join(libdir, "libcollie_heap.so"))
        for lib in glob.glob(os.path.join(bdir, "lib", "*", "libcollie_mpi.so")):
            flavour = os.path.basename(os.path.dirname(lib))
            os.makedirs(os.path.join(libdir, flavour))
            shutil.copy2(os.path.realpath(lib), os.path.join(libdir, flavour, "libcollie_mpi.so"))


def numpy_include():
    import numpy   # the extension reads numpy arrays through numpy's C API
    return numpy.get_include()


werror = ["-Werror"] if os.environ.get("COLLIE_WERROR") == "1" else []
extension = Extension(
    "collie._collie",
    sources=sorted(glob.glob("python/src/*.c")),
    include_dirs=["include", numpy_include()],
    libraries=["dl"],
    extra_compile_args=["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter",
                        "-Wno-missing-field-initializers", "-Wno-cast-function-type"] + werror,
)

setup(
    version=version(),
    ext_modules=[extension],
    cmdclass={"build_ext": BuildCollie},
    options={"build": {"build_base": "build/pip"}},
)
