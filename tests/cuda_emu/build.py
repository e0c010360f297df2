#!/usr/bin/env python3
"""Builds a copy of asmr_kernels whose _cuda module runs the CUDA kernels on the
CPU (see README.md): csrc/cuda/*.cu are compiled as C++ against include/, with
each `kernel<<<grid, block, shm, stream>>>(args)` rewritten into a call of the
emulator's launcher.

    build.py REPO OUT [extra compiler flags, e.g. -fsanitize=address]

OUT/asmr_kernels gets the package's Python files, its built _cpu module and the
emulated _cuda module.
"""

import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

LAUNCH = re.compile(r"(\b[A-Za-z_]\w*(?:<[^<>;]*>)?)\s*<<<(.*?)>>>", re.S)


def main() -> None:
    repo, out = (pathlib.Path(a).resolve() for a in sys.argv[1:3])
    flags = sys.argv[3:]
    here = pathlib.Path(__file__).resolve().parent
    work = out / "emu_build"
    pkg = out / "asmr_kernels"
    work.mkdir(parents=True, exist_ok=True)
    pkg.mkdir(parents=True, exist_ok=True)
    for f in (repo / "asmr_kernels").iterdir():
        if f.suffix in (".py", ".pyx", ".pxd") or (f.suffix == ".so" and f.name.startswith("_cpu")):
            shutil.copy(f, pkg / f.name)
    if not list(pkg.glob("_cpu*.so")):
        sys.exit("asmr_kernels/_cpu*.so is missing: build the package first (make install)")
    cxx = ["g++", "-std=c++20", "-O1", "-g", "-fPIC", "-pthread", *flags]
    objs = []
    for cu in sorted((repo / "csrc/cuda").glob("*.cu")):
        src = LAUNCH.sub(lambda m: f"::emu::launch([](auto... a) {{ {m.group(1)}(a...); }}, {m.group(2)})",
                         cu.read_text())
        cpp = work / f"{cu.stem}.cpp"
        cpp.write_text(f'#line 1 "{cu}"\n{src}')
        subprocess.run([*cxx, "-I", str(here / "include"), "-I", str(repo / "csrc/include"),
                        "-I", str(repo / "csrc/cuda"), "-c", str(cpp), "-o", str(cpp.with_suffix(".o"))],
                       check=True)
        objs.append(str(cpp.with_suffix(".o")))
    binding = work / "_cuda_binding.cpp"
    subprocess.run([sys.executable, "-m", "cython", "--cplus", "-3", str(repo / "asmr_kernels/_cuda.pyx"),
                    "-o", str(binding)], check=True)
    subprocess.run([*cxx, "-I", sysconfig.get_paths()["include"], "-I", str(repo / "csrc/include"), "-c",
                    str(binding), "-o", str(binding.with_suffix(".o"))], check=True)
    module = pkg / f"_cuda{sysconfig.get_config_var('EXT_SUFFIX')}"
    subprocess.run([*cxx, "-shared", "-o", str(module), str(binding.with_suffix(".o")), *objs], check=True)
    print(f"built {module}")


if __name__ == "__main__":
    main()
