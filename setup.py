"""Build ASMR: setuptools hands the native part to CMake (the way vLLM does).

Environment:
  ASMR_CUDA=auto|on|off        build the CUDA kernels (auto: when nvcc is found)
  ASMR_CUDA_ARCHS="90-real;90-virtual"   CMAKE_CUDA_ARCHITECTURES for the CUDA build
  ASMR_NATIVE_ARCH=1           compile the CPU kernels with -march=native (not portable)
  ASMR_BUILD_TYPE=Release      CMake build type
  MAX_JOBS=N                   parallel compile jobs (default: all cores)
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _cuda_mode() -> str:
    mode = os.environ.get("ASMR_CUDA", "auto").strip().lower()
    if mode not in ("auto", "on", "off"):
        raise SystemExit(f"ASMR_CUDA must be auto, on or off, not {mode!r}")
    return mode


def _nvcc() -> str | None:
    for candidate in (os.environ.get("CUDACXX"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


class CMakeExtension(Extension):
    """An extension module whose build CMake owns (no sources for setuptools)."""

    def __init__(self, name: str, target: str, optional: bool = False) -> None:
        super().__init__(name, sources=[])
        self.target = target
        self.optional = optional


class CMakeBuild(build_ext):
    def build_extensions(self) -> None:
        # A fixed folder in the tree, so that rebuilds (make test after an edit)
        # are incremental even when pip builds from a temporary directory.
        tag = f"cmake-{sys.implementation.cache_tag}-{os.environ.get('ASMR_BUILD_TYPE', 'Release')}"
        build_dir = ROOT / "build" / tag
        build_dir.mkdir(parents=True, exist_ok=True)
        out_dir = build_dir / "modules"
        mode = _cuda_mode()
        args = [
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-DCMAKE_BUILD_TYPE={os.environ.get('ASMR_BUILD_TYPE', 'Release')}",
            f"-DASMR_CUDA={mode.upper()}",
            f"-DASMR_NATIVE_ARCH={'ON' if os.environ.get('ASMR_NATIVE_ARCH') == '1' else 'OFF'}",
            f"-DASMR_OUTPUT_DIR={out_dir}",
        ]
        nvcc = _nvcc()
        if mode != "off" and nvcc:
            args += [f"-DCMAKE_CUDA_COMPILER={nvcc}",
                     f"-DCMAKE_CUDA_ARCHITECTURES={os.environ.get('ASMR_CUDA_ARCHS', '90-real;90-virtual')}"]
        if shutil.which("ninja"):
            args.append("-GNinja")
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), *args], check=True)
        targets = [ext.target for ext in self.extensions if not ext.optional]
        cuda_built = (build_dir / "asmr_cuda_built.txt").read_text().strip() == "ON"
        if cuda_built:
            targets += [ext.target for ext in self.extensions if ext.optional]
        jobs = os.environ.get("MAX_JOBS") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build_dir), "--parallel", jobs,
                        "--target", *targets], check=True)

        for ext in list(self.extensions):
            built = sorted(out_dir.glob(f"{ext.target}.*.so")) + sorted(out_dir.glob(f"{ext.target}.*.pyd"))
            if not built:
                if ext.optional and not cuda_built:
                    print(f"ASMR: skipping {ext.name} (CUDA not built)")
                    self.extensions.remove(ext)
                    continue
                raise RuntimeError(f"CMake did not produce {ext.target} in {out_dir}")
            dest = Path(self.get_ext_fullpath(ext.name))
            dest.parent.mkdir(parents=True, exist_ok=True)
            # beside it, then renamed over it: a process that has the old module loaded keeps
            # its mapped file (copying over it in place could crash a running server)
            partial = dest.with_name(dest.name + ".partial")
            shutil.copyfile(built[0], partial)
            os.replace(partial, dest)


ext_modules = [CMakeExtension("asmr_kernels._cpu", "_cpu")]
if _cuda_mode() != "off" and (_cuda_mode() == "on" or _nvcc()):
    ext_modules.append(CMakeExtension("asmr_kernels._cuda", "_cuda", optional=_cuda_mode() == "auto"))

setup(
    packages=find_packages("python") + ["asmr_kernels"],
    package_dir={"": "python", "asmr_kernels": "asmr_kernels"},
    # the fitted models (confidence, support) are read at import
    package_data={"asmr_kernels": ["*.pyx", "*.pxd"], "asmr.retrieve": ["*.json"], "asmr.text": ["*.json"],
                  "asmr.verify": ["*.json"]},
    ext_modules=ext_modules,
    cmdclass={"build_ext": CMakeBuild},
)
