"""Runner overhead, memory, output size and concurrency, side by side with the reference.

(a) Overhead: a generated suite (one validator per case) run with the mock adapter at zero
    latency, cache off, by skillab and by the reference runner (`skillevaluation run --adapter
    mock`, 0.8.0). Pairs are interleaved (the order alternates), so a load spike on a shared
    machine hits both arms of a pair; prints medians of wall time, peak RSS (of the runner and
    every process it waited for, from wait4) and results.json size, and the median per-pair
    ratio. Targets: 200 cases at most 0.50x; 1,000 cases x --runs 5 at most 0.50x with peak
    memory at most 1.5x the reference's.
(b) Concurrency: the same suite at simulated model latency against the ideal
    (cases x runs x 2 arms x latency / concurrency). Target: within 1.1x at 8 and 16.

    python benchmarks/overhead.py [--cases 200] [--runs 1] [--pairs 5] [--latency-ms 200]
    python benchmarks/overhead.py --cases 1000 --runs 5 --pairs 5 --skip-latency --skip-bare --compact
    python benchmarks/overhead.py --cases 50 --pairs 2 --skip-latency --skip-bare --bundled
    python benchmarks/overhead.py --cases 200 --pairs 3 --skip-latency --skip-bare --before ../main/runner

``--before DIR`` also runs, within each pair, skillab from another checkout's source root
(``DIR`` on ``PYTHONPATH``: main's ``runner/``, say) and prints it beside this one: wall and
machine CPU of before and after under the same load.

``--compact`` runs skillab with ``--compact-results`` (unindented document, transcripts and final
outputs in ``results.arms.jsonl`` beside it; the size printed is both files together), the
option meant for large runs; the reference has no such option and always writes its own.

skillab runs every validator in its sandbox (bubblewrap by default: fresh namespaces, a private
/proc, a scrubbed environment, resource limits); the reference wraps each in `unshare -rn`.
`--sandbox none` rows show what the sandbox itself costs. Both runners start from compiled
bytecode in one shared cache, as installed packages do (``bytecode_env``), filled by an
unmeasured run of each on a 2-case suite. Within each bwrap pair the same
number of validator commands also runs with no engine around it, twice: through skillab's
sandboxed ``run_command`` and as the bare ``bwrap`` command under ``xargs -P`` (the "floor"
lines): the least the bwrap ratio can be on this machine while every command gets fresh
namespaces.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from skillab.core.settings import EngineSettings

REFERENCE = "skillevaluation[runner]==0.8.0"
HERE = Path(__file__).resolve().parent


def make_suite(root: Path, cases: int, bundled: bool = False) -> Path:
    skill = root / "bench-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: bench-skill\ndescription: A skill for measuring runner overhead.\n---\n"
        "Answer every request in one line.\n"
    )
    body = ["cases:"]
    for i in range(cases):
        body += [
            f"  - name: case_{i:04d}",
            f"    prompt: \"Summarize item {i} in one line.\"",
            "    validators:",
            "      - cmd: \"sh scripts/check.sh\"" if bundled else "      - cmd: \"test -s response.txt\"",
        ]
    (skill / "eval.yaml").write_text("\n".join(body) + "\n")
    if bundled:  # a bundled grader: every arm fingerprints it and grades from its pristine copy
        (skill / "scripts").mkdir()
        (skill / "scripts" / "check.sh").write_text("test -s response.txt\n")
    return skill


def reference_runner(cache: Path) -> Path:
    """The reference CLI: the one installed beside this Python, else a virtualenv of its own."""
    local = Path(sys.executable).parent / "skillevaluation"
    if local.exists():
        return local
    env_dir = cache / "reference-venv"
    exe = env_dir / "bin" / "skillevaluation"
    if not exe.exists():
        print(f"installing {REFERENCE} into {env_dir} ...", file=sys.stderr)
        venv.create(env_dir, with_pip=True)
        subprocess.run([str(env_dir / "bin" / "pip"), "install", "-q", REFERENCE], check=True)
    return exe


@dataclass(frozen=True)
class Sample:
    seconds: float
    peak_mib: float
    output_bytes: int
    # Busy CPU time of the whole machine while the run lasted (/proc/stat): the runner, every
    # process it started, whether waited for or not, and the kernel's own threads (a network
    # namespace, a cgroup and a mount tree are torn down there, not in the process that used them).
    machine_cpu_s: float


def machine_busy_s() -> float:
    """Seconds of CPU the whole machine has spent busy since boot, over all cores."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Floor:
    """One pair's floors (``sandbox_floors``), beside that pair's reference run."""

    through_skillab_s: float
    bare_bwrap_s: float
    bare_bwrap_cpu_s: float
    reference_s: float = 0.0


def bytecode_env(cache: Path) -> dict[str, str]:
    """The environment every runner starts in here: compiled bytecode kept, in one cache both
    share (filled by an unmeasured first run), as any installed package has it. A machine that
    sets PYTHONDONTWRITEBYTECODE otherwise recompiles an editable checkout at every start."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def measure(cmd: list[str], output: Path, env: dict[str, str]) -> Sample:
    """Wall time and peak RSS (the largest of the runner and its waited-for descendants)."""
    output.unlink(missing_ok=True)
    busy = machine_busy_s()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    busy = machine_busy_s() - busy
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n"
                         f"{stderr.decode(errors='replace')[-2000:]}")
    size = output.stat().st_size if output.exists() else 0
    detail = output.with_name(f"{output.stem}.arms.jsonl")
    if detail.exists():
        size += detail.stat().st_size
        detail.unlink()
    return Sample(elapsed, usage.ru_maxrss / 1024, size, busy)


def skillab_cmd(skill: Path, out: Path, *extra: str) -> list[str]:
    exe = str(Path(sys.executable).parent / "skillab")
    if not Path(exe).exists():
        exe = shutil.which("skillab") or exe
    return [exe, "run", str(skill), "--adapter", "mock", "--no-cache", "--quiet",
            "--output", str(out), "--no-history", *extra]


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def workspaces_on() -> str:
    """Where skillab puts the run's workspaces here (a tmpfs with room, else TMPDIR)."""
    from skillab.sandbox.scratch import roomy_tmpfs, scratch_parent

    parent = scratch_parent()
    if parent is None:
        return f"{tempfile.gettempdir()} (TMPDIR)"
    return f"{parent} ({'tmpfs' if roomy_tmpfs(parent) else 'SKILLAB_WORKSPACE_DIR'})"


def paired(pairs: int, ours, theirs, beside=None, third=None) -> tuple[list[Sample], list[Sample], list[float]]:
    """Interleaved pairs, alternating which runner goes first; per-pair time ratios.
    ``beside`` (optional) runs within each pair too, after the runners, so its figure shares the
    pair's load. ``third`` (optional, ``--before``'s runner, which keeps its own samples) runs in
    each pair as well: the order of the three rotates from pair to pair, so none always follows
    ``beside`` (the floors leave the kernel tearing down their namespaces as the next pair starts)."""
    mine, ref, ratios = [], [], []
    runners = [ours, theirs] + ([third] if third is not None else [])
    for index in range(pairs):
        shift = index % len(runners)
        order = list(range(len(runners)))[shift:] + list(range(len(runners)))[:shift]
        taken = {i: runners[i]() for i in order}
        a, b = taken[0], taken[1]
        if beside is not None:
            beside(b)
        mine.append(a)
        ref.append(b)
        ratios.append(a.seconds / b.seconds)
    return mine, ref, ratios


def sandbox_floors(work: Path, commands: int, concurrency: int) -> Floor | None:
    """Seconds to run the suite's validator ``commands`` times at skillab's concurrency, with no
    engine around it: through skillab's own sandboxed command path (bwrap: fresh namespaces per
    command, its cgroup, its limits, the Python that spawns and watches it), and as the bare
    ``bwrap`` invocation alone, started by ``xargs -P`` (no cgroup, no Python). The first is the
    least the bwrap row above can take here; the second, the least any runner starting one
    bwrap sandbox per command can. Third, the machine's busy CPU seconds during the bare run:
    divided by the cores, the least wall time one bwrap per command allows here at any
    concurrency."""
    from skillab.sandbox.backend import default_backend
    from skillab.sandbox.limits import ulimit_script
    from skillab.sandbox.process import run_command
    from skillab.sandbox.view import View

    backend = default_backend()
    if backend.name != "bwrap":
        return None
    workspace = work / "floor"
    workspace.mkdir(exist_ok=True)
    (workspace / "response.txt").write_text("answer\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(workspace)}

    def one(_: int) -> None:
        result = run_command("test -s response.txt", cwd=workspace, env=env, timeout_s=60, backend=backend)
        if result.exit_code != 0:
            raise SystemExit(f"the floor's command failed: {result.describe()}\n{result.stderr}")

    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(commands)))
    through_skillab = time.perf_counter() - start

    script = ulimit_script(60) + "test -s response.txt"
    wrapped = backend.wrap(["/bin/bash", "-c", script], View(workspace=workspace, cwd=workspace), env)
    for release in wrapped.cleanup:
        release()
    argv = wrapped.argv[wrapped.argv.index(backend.binary):]
    # xargs puts each input line into --setenv's value, so every command is the same bwrap.
    at = argv.index("--")
    argv = [*argv[:at], "--setenv", "FLOOR_INDEX", "{}", *argv[at:]]
    if "--seccomp" in argv:
        # Each bwrap reads its seccomp filter to the end from a descriptor of its own: here a
        # file opened on fd 3 by a shell that then becomes the bwrap.
        from skillab.sandbox.seccomp import program

        filter_file = work / "seccomp.bpf"
        filter_file.write_bytes(program())
        argv[argv.index("--seccomp") + 1] = "3"
        argv = ["/bin/sh", "-c", 'exec "$@" 3<"$0"', str(filter_file), *argv]
    busy = machine_busy_s()
    start = time.perf_counter()
    subprocess.run(["xargs", "-P", str(concurrency), "-I{}", *argv], cwd=workspace, check=True,
                   input="".join(f"{i}\n" for i in range(commands)), text=True, env={})
    return Floor(through_skillab, time.perf_counter() - start, machine_busy_s() - busy)


def median_of(samples: list[Sample], attribute: str) -> float:
    return statistics.median(getattr(s, attribute) for s in samples)


def report_pair(label: str, mine: list[Sample], ref: list[Sample], ratios: list[float], target: str) -> None:
    t_ours, t_ref = median_of(mine, "seconds"), median_of(ref, "seconds")
    m_ours, m_ref = median_of(mine, "peak_mib"), median_of(ref, "peak_mib")
    o_ours, o_ref = median_of(mine, "output_bytes"), median_of(ref, "output_bytes")
    print(f"  {label}")
    print(f"    time     skillab {t_ours:8.2f} s     reference {t_ref:8.2f} s     "
          f"median pair ratio {statistics.median(ratios):5.2f}x  (pairs: "
          f"{', '.join(f'{r:.2f}' for r in ratios)})   {target}")
    print(f"    peak RSS skillab {m_ours:8.1f} MiB   reference {m_ref:8.1f} MiB   {m_ours / m_ref:5.2f}x")
    print(f"    results  skillab {o_ours / 1e6:8.2f} MB    reference {o_ref / 1e6:8.2f} MB    "
          f"{o_ours / max(o_ref, 1):5.2f}x")
    c_ours, c_ref = median_of(mine, "machine_cpu_s"), median_of(ref, "machine_cpu_s")
    cores = os.cpu_count() or 1
    print(f"    machine CPU skillab {c_ours:5.2f} s  reference {c_ref:5.2f} s  {c_ours / c_ref:5.2f}x   "
          f"(busy time of all {cores} cores during the run, kernel threads included; "
          f"spread over all {cores} cores skillab's would take at least {c_ours / cores:.2f} s, "
          f"{c_ours / cores / t_ref:.2f}x of the reference's wall)")


def report_floors(floors: list[Floor], mine: list[Sample]) -> None:
    """The pairs' floors (``sandbox_floors``): medians and their ratios to the reference, and
    skillab's run against the bare bwrap floor."""
    for field_name, label in (("through_skillab_s", "skillab's sandboxed run_command, no engine"),
                              ("bare_bwrap_s", "bare bwrap under xargs -P, no Python")):
        if floors:
            print(f"    floor    the same commands through {label}: "
                  f"{statistics.median(getattr(f, field_name) for f in floors):.2f} s, median pair ratio "
                  f"{statistics.median(getattr(f, field_name) / f.reference_s for f in floors):.2f}x")
    if floors:
        cpu = statistics.median(f.bare_bwrap_cpu_s for f in floors)
        cores = os.cpu_count() or 1
        print(f"    floor    machine CPU of the bare bwrap commands: {cpu:.2f} s; on {cores} "
              f"cores at least {cpu / cores:.2f} s, median pair ratio "
              f"{statistics.median(f.bare_bwrap_cpu_s / cores / f.reference_s for f in floors):.2f}x: the least "
              f"any runner starting one bwrap per command can take here")
        wall = statistics.median(m.seconds / f.bare_bwrap_s for m, f in zip(mine, floors))
        busy = statistics.median(m.machine_cpu_s / f.bare_bwrap_cpu_s for m, f in zip(mine, floors))
        print(f"    floor    skillab against the bare bwrap floor: wall {wall:.2f}x, machine CPU {busy:.2f}x "
              f"(median pair ratios; goal <= 1.2x wall)")


def report_before(checkout: Path, earlier: list[Sample], mine: list[Sample], ref: list[Sample],
                  floors: list[Floor]) -> None:
    """Before (``--before``) and after side by side, each pair's runs under one load, against
    the reference and the bare bwrap floor."""
    cores = os.cpu_count() or 1
    print(f"  before ({checkout}) and after, within the same pairs")
    floor = {"seconds": [f.bare_bwrap_s for f in floors], "machine_cpu_s": [f.bare_bwrap_cpu_s for f in floors]}
    for label, attribute in (("wall", "seconds"), ("machine CPU", "machine_cpu_s")):
        b, a, r = (median_of(x, attribute) for x in (earlier, mine, ref))
        pairs = ", ".join(f"{getattr(x, attribute) / getattr(y, attribute):.2f}" for x, y in zip(mine, earlier))
        line = (f"    {label:<11} before {b:6.2f} s  after {a:6.2f} s  reference {r:6.2f} s   after/before "
                f"{a / b:5.2f}x (pairs: {pairs});  vs reference before {b / r:.2f}x, after {a / r:.2f}x")
        if floors:
            f = statistics.median(floor[attribute])
            line += f";  vs bare bwrap floor ({f:.2f} s) before {b / f:.2f}x, after {a / f:.2f}x"
        print(line)
    print(f"    (machine CPU: busy time of all {cores} cores while each ran, other load included)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=5, help="interleaved pairs (medians)")
    parser.add_argument("--concurrency", type=int, default=None, help="skillab's (default: its own)")
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--latency-repeats", type=int, default=3)
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--skip-bare", action="store_true", help="no unsandboxed pairs")
    parser.add_argument("--compact", action="store_true", help="skillab with --compact-results")
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout's runner/ directory: its skillab runs within each pair too")
    parser.add_argument("--bundled", action="store_true",
                        help="validators call a bundled script (scripts/check.sh), as most suites' do")
    args = parser.parse_args()

    cache = HERE / ".cache"
    cache.mkdir(exist_ok=True)
    ref = reference_runner(cache)
    extra = ["--runs", str(args.runs)] + (["--concurrency", str(args.concurrency)] if args.concurrency else [])
    extra += ["--compact-results"] if args.compact else []
    shape = " --compact-results" if args.compact else ""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        skill = make_suite(work, args.cases, args.bundled)
        ours_out, ref_out = work / "ours.json", work / "ref.json"
        print(f"suite: {args.cases} cases x {args.runs} run(s), 1 validator each; "
              f"{args.pairs} interleaved pair(s); {load()}")
        print(f"skillab's workspaces: {workspaces_on()}")
        print("\n(a) runner overhead, mock adapter, zero latency, cache off")

        env = bytecode_env(work / "pycache")

        def theirs(suite: Path = skill) -> Sample:
            return measure([str(ref), "run", str(suite), "--adapter", "mock", "--no-cache",
                            "--runs", str(args.runs), "-o", str(ref_out)], ref_out, env)

        def ours(suite: Path = skill) -> Sample:
            return measure(skillab_cmd(suite, ours_out, *extra), ours_out, env)

        warm_up = make_suite(work / "warm-up", 2)
        for runner in (ours, theirs):
            runner(warm_up)

        floors: list[Floor] = []
        earlier: list[Sample] = []

        def before(suite: Path = skill, keep: bool = True) -> Sample:
            assert args.before is not None
            sample = measure(skillab_cmd(suite, ours_out, *extra), ours_out,
                             {**env, "PYTHONPATH": str(args.before.resolve())})
            if keep:
                earlier.append(sample)
            return sample

        if args.before is not None:
            before(warm_up, keep=False)

        def floor(reference: Sample) -> None:
            found = sandbox_floors(work, args.cases * args.runs * 2,
                                   args.concurrency or EngineSettings().concurrency)
            if found is not None:
                floors.append(replace(found, reference_s=reference.seconds))

        # Not ``ref``: that is the reference runner ``theirs`` starts, needed again below.
        mine, reference, ratios = paired(args.pairs, ours, theirs, floor,
                                         before if args.before is not None else None)
        report_pair(f"skillab{shape} (sandbox: bwrap) vs reference", mine, reference, ratios, "target <= 0.50x")
        if earlier:
            report_before(args.before, earlier, mine, reference, floors)
        report_floors(floors, mine)
        if not args.skip_bare:
            def bare() -> Sample:
                return measure(skillab_cmd(skill, ours_out, *extra), ours_out, {**env, "SKILLAB_SANDBOX": "none"})

            report_pair(f"skillab{shape} --sandbox none vs reference", *paired(args.pairs, bare, theirs),
                        "(what the sandbox costs)")
        print(f"  after (a): {load()}")

        if not args.skip_latency:
            print(f"\n(b) concurrency at {args.latency_ms} ms simulated latency, "
                  f"median of {args.latency_repeats}")
            for concurrency in (8, 16):
                ideal = args.cases * args.runs * 2 * args.latency_ms / 1000 / concurrency
                walls, runs = [], []
                for _ in range(args.latency_repeats):
                    walls.append(measure(skillab_cmd(skill, ours_out, "--runs", str(args.runs),
                                                     "--mock-latency-ms", str(args.latency_ms),
                                                     "--concurrency", str(concurrency)), ours_out, env).seconds)
                    runs.append(json.loads(ours_out.read_text())["timings"]["wall_ms"] / 1000)
                wall, run = statistics.median(walls), statistics.median(runs)
                # The process's wall is the figure; the run's own (from its document, without
                # the interpreter's start-up and the final write) shows where the rest goes.
                print(f"    concurrency {concurrency:2d}: {wall:7.2f} s vs ideal {ideal:6.2f} s "
                      f"-> {wall / ideal:5.2f}x   target <= 1.10x   (the run itself {run:.2f} s, "
                      f"{run / ideal:.2f}x)")
            print(f"  after (b): {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
