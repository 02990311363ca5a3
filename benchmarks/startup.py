"""Start-up time of `skillab --help`, `skillab validate` and a small `skillab run` against the
reference runner.

Each pair runs skillab and the reference (`skillevaluation`, 0.8.0) back to back, alternating
which goes first, so a load spike on a shared machine hits both arms of a pair alike. Prints the
median of each runner's times and the median of the per-pair ratios (skillab / reference), with
the load average before and after. Target: at most 1.00x for each command.

    python benchmarks/startup.py [--pairs 21] [--cases 5]
    python benchmarks/startup.py --pairs 11 --before ../main/runner

``--before DIR`` also runs, within each pair, skillab from another checkout's source root
(``DIR`` on ``PYTHONPATH``: main's ``runner/``, say) and prints after/before, so a start-up
change is read against the code it changes under the same load.

The run row is the mock adapter with the cache and history off (``overhead.py``'s command), so
what it adds to ``validate`` is the engine's imports and one arm pair per case. Its "of which
imports" line imports, in a process of its own, every module that run had loaded and does nothing
else: the share of a small run's CPU that is start-up. The reference CLI
is found as `overhead.py` finds it (beside this Python, else in the virtualenv it builds under
`benchmarks/.cache/`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from overhead import bytecode_env, load, make_suite, reference_runner, skillab_cmd  # noqa: E402


def executable(name: str) -> str:
    found = Path(sys.executable).parent / name
    return str(found) if found.exists() else (shutil.which(name) or name)


def once(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the command and what it waited for)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: Popen must not wait again
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{stderr.decode()[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def paired(runners: list[tuple[list[str], dict[str, str]]], pairs: int) -> list[list[tuple[float, float]]]:
    """Each runner's (wall, CPU) seconds per pair, the order rotating from pair to pair; the first
    pair only warms caches (and fills the shared bytecode cache)."""
    times: list[list[tuple[float, float]]] = [[] for _ in runners]
    for index in range(pairs + 1):
        order = list(range(len(runners)))
        order = order[index % len(order):] + order[:index % len(order)]
        taken = {i: once(*runners[i]) for i in order}
        if index:
            for i, seconds in taken.items():
                times[i].append(seconds)
    return times


def ratio(mine: list[tuple[float, float]], theirs: list[tuple[float, float]], part: int = 0) -> float:
    """The median per-pair ratio of wall (``part`` 0) or CPU (1) seconds."""
    return statistics.median(a[part] / b[part] for a, b in zip(mine, theirs, strict=True))


def median(samples: list[tuple[float, float]], part: int = 0) -> float:
    return statistics.median(s[part] for s in samples)


def imports_alone(cmd: list[str], env: dict[str, str], listing: Path) -> list[str]:
    """A command that imports, and does nothing else with, every module the skillab command
    ``cmd`` had loaded when it exited: what the command's imports cost by themselves."""
    record = (f"import atexit, runpy, sys\n"
              f"atexit.register(lambda: open({str(listing)!r}, 'w').write('\\n'.join(sorted(sys.modules))))\n"
              f"sys.argv = {['skillab', *cmd[1:]]!r}\n"
              "runpy.run_module('skillab', run_name='__main__', alter_sys=True)")
    subprocess.run([sys.executable, "-c", record], env=env, capture_output=True)
    return [sys.executable, "-c", "import importlib\n"
            f"for name in open({str(listing)!r}).read().split():\n"
            "    if not name.startswith('_') and not name.endswith('__main__'):\n"
            "        try:\n"
            "            importlib.import_module(name)\n"
            "        except ImportError:\n"  # an alias no finder serves (cython_runtime, typing.io)
            "            pass"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=21)
    parser.add_argument("--cases", type=int, default=5)
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout's runner/ directory: its skillab runs within each pair too")
    args = parser.parse_args()

    cache = HERE / ".cache"
    cache.mkdir(exist_ok=True)
    ours, ref = executable("skillab"), str(reference_runner(cache))
    with tempfile.TemporaryDirectory() as tmp:
        skill = make_suite(Path(tmp), args.cases)
        out = Path(tmp) / "results.json"
        env = bytecode_env(Path(tmp) / "pycache")  # filled by the warm-up pair
        earlier = {**env, "PYTHONPATH": str(args.before.resolve())} if args.before else None
        print(f"start-up, {args.pairs} interleaved pairs, medians; {load()}")
        for label, mine, theirs in (
            ("--help", [ours, "--help"], [ref, "--help"]),
            (f"validate ({args.cases} cases)", [ours, "validate", str(skill)], [ref, "validate", str(skill)]),
            (f"run ({args.cases} cases)", skillab_cmd(skill, out),
             [ref, "run", str(skill), "--adapter", "mock", "--no-cache", "-o", str(out)]),
        ):
            runners = [(mine, env), (theirs, env)] + ([(mine, earlier)] if earlier else [])
            times = paired(runners, args.pairs)
            a, b = median(times[0]), median(times[1])
            print(f"  {label:<20} skillab {a * 1000:6.1f} ms   reference {b * 1000:6.1f} ms   "
                  f"ratio {ratio(times[0], times[1]):4.2f}x   target <= 1.00x   "
                  f"(CPU {median(times[0], 1) * 1000:.0f} / {median(times[1], 1) * 1000:.0f} ms, "
                  f"{ratio(times[0], times[1], 1):4.2f}x)")
            if earlier:
                c = median(times[2])
                print(f"  {'':<20} before  {c * 1000:6.1f} ms   after/before {ratio(times[0], times[2]):4.2f}x "
                      f"wall, {ratio(times[0], times[2], 1):4.2f}x CPU (before {median(times[2], 1) * 1000:.0f} ms "
                      f"CPU); before vs reference {ratio(times[2], times[1]):4.2f}x")
        run = skillab_cmd(skill, out)
        alone = paired([(imports_alone(run, env, Path(tmp) / "modules.txt"), env), (run, env)], args.pairs)
        print(f"  {'':<20} of which imports: the run's modules imported alone take "
              f"{median(alone[0], 1) * 1000:.0f} ms CPU, {ratio(alone[0], alone[1], 1):.0%} of the run's "
              f"{median(alone[1], 1) * 1000:.0f} ms (per-pair median)")
        print(f"  after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
